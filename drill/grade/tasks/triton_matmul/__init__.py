"""The ``triton_matmul`` task: everything about it lives in this folder (see drill/grade/tasks/__init__.py)."""
