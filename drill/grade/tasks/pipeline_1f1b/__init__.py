"""The ``pipeline_1f1b`` task: everything about it lives in this folder (see drill/grade/tasks/__init__.py)."""
