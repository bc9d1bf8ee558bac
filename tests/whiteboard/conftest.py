"""A test that calls run_battery makes this process the judge: give it one intra-op thread, as drill's
own judge has (the grader's tensors are tiny; on a busy 2-core machine more threads only spin).

Where Triton is not installed, every test parametrised with a kernel task (its id, a file in its
folder, a ``triton_*`` implementation) is skipped with the way to get it, here once for all files."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import PurePath

import pytest

from drill.grade.kernel_env import HOW_TO_GET, is_kernel_task

try:
    import torch
except ImportError:  # the torch-free tests here (catalog, watcher) still run
    pass
else:
    torch.set_num_threads(1)

WITHOUT_TRITON = pytest.mark.skip(reason=f"Triton is not installed: {HOW_TO_GET}")


def is_kernel_param(value) -> bool:
    """A kernel task's id, or a path inside a kernel task's folder or named after one."""
    if isinstance(value, str):
        return is_kernel_task(value)
    if isinstance(value, PurePath):
        return any(is_kernel_task(part) for part in value.parts)
    if isinstance(value, (tuple, list)):
        return any(is_kernel_param(v) for v in value)
    return False


def pytest_collection_modifyitems(config, items):
    if find_spec("triton") is not None:
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(is_kernel_param(v) for v in callspec.params.values()):
            item.add_marker(WITHOUT_TRITON)
