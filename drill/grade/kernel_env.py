"""Whether the kernels track can run here: Triton installed or not, and its kernels interpreted or compiled.

Torch-free and Triton-free (``find_spec`` and the package metadata read no module): the CLI asks
before a grade starts, so a kernel task without Triton fails in one line saying how to get it,
not with the user side's ``No module named 'triton'``.
"""

from __future__ import annotations

from importlib import metadata, util
from pathlib import Path

from drill.errors import DrillError

HOW_TO_GET = "pip install 'llm-drill[kernels]'"


def is_kernel_task(task: str) -> bool:
    return task.startswith("triton_")


def triton_version() -> str | None:
    """Triton's version, or None when it cannot be imported here."""
    if util.find_spec("triton") is None:
        return None
    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:  # importable without metadata (a source checkout on the path)
        return "unknown version"


def require_triton(task: str) -> None:
    """Refuse a kernel task where Triton is missing (exit 2, the way to get it)."""
    if is_kernel_task(task) and util.find_spec("triton") is None:
        raise DrillError("{task} is a Triton kernel task and Triton is not installed here: {how}", task=task, how=HOW_TO_GET)


def preload_for(request: dict) -> tuple[str, ...]:
    """What the zygote should import ahead for a grade request (drill.grade.isolation.Worker): Triton for a
    kernel task, or for a file of no named task that mentions it, when its kernels will be interpreted (a CPU
    grade: the interpreter is chosen when triton is imported, and a GPU grade compiles anyway)."""
    from drill import torch_info

    task = request.get("task")
    kernel = (task and is_kernel_task(task)) or (task is None and "triton" in Path(request["path"]).read_text("utf-8", "replace"))
    build = torch_info.installed()
    on_cpu = request.get("device") == "cpu" or (request.get("device") == "auto" and build is not None and build.cuda is None)
    return ("triton",) if kernel and on_cpu else ()
