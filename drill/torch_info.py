"""What ``drill doctor`` says about torch, without importing torch into drill's process.

Importing torch takes a second or more (many on a busy machine). Its version and CUDA build are
plain assignments in ``torch/version.py``, read here as text; only a CUDA build needs torch
itself, to ask for the device, and that runs in a child process with a time limit.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

DEVICE_TIMEOUT_S = 20.0
_ASK_DEVICE = "import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"


@dataclass(frozen=True)
class TorchBuild:
    version: str
    cuda: str | None  # the CUDA version the build targets; None for a CPU-only build


def installed() -> TorchBuild | None:
    """torch's version and CUDA build from its version.py; None when torch is not installed."""
    spec = find_spec("torch")
    if spec is None or not spec.origin:
        return None
    values: dict[str, object] = {}
    try:
        tree = ast.parse((Path(spec.origin).parent / "version.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return TorchBuild("?", None)
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if isinstance(target, ast.Name) and isinstance(getattr(node, "value", None), ast.Constant):
            values[target.id] = node.value.value
    cuda = values.get("cuda")
    return TorchBuild(str(values.get("__version__", "?")), cuda if isinstance(cuda, str) else None)


def cuda_device() -> str | None:
    """The first CUDA device's name, '' when the build sees none; None when torch took over DEVICE_TIMEOUT_S."""
    from drill.grade.user import procs

    parent = os.getpid()  # the child dies with drill
    try:
        done = subprocess.run([sys.executable, "-c", _ASK_DEVICE], capture_output=True, text=True, timeout=DEVICE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, preexec_fn=lambda: procs.die_with_parent(parent))  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.strip() if done.returncode == 0 else ""
