"""The recorder behind ``drill grade --trace``: which torch op each line of the user's file ran, and what it made.

It runs on the user side around one call of the user's code and decides nothing: it sends back,
per op called from the user's file, the line (the innermost frame in that file), the op's name,
a copy of its first tensor output, which earlier records (or call inputs) it consumed and which
call input it wrote in place (-1: none). The
judge matches the copies against the reference's named intermediates (drill.grade.trace_match).
"""

from __future__ import annotations

import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from .wire import NAMES  # what the wire carries: a complex step (view_as_complex) is recorded without its values

MAX_RECORDS = 400
MAX_ELEMENTS = 400_000  # all copies together: the trace input is small, a loop over it is not
IN_PLACE = {f"__i{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "matmul", "pow", "mod", "and", "or", "xor")} | {
    "__setitem__"  # x[..., :2] = ...: written where it stands
}


def op_name(func) -> str:
    name = getattr(func, "__name__", None) or type(func).__name__
    owner = getattr(func, "__objclass__", None) or getattr(func, "__self__", None)
    if name == "__get__" and owner is not None:  # a property such as Tensor.T or Tensor.mT
        name = getattr(owner, "__name__", name)
    return str(name)[:60]


def storage(t: torch.Tensor) -> int:
    """Where ``t``'s memory starts (0: none to share, e.g. an empty tensor)."""
    with torch._C.DisableTorchFunction():
        try:
            return t.untyped_storage().data_ptr() if t.layout == torch.strided else 0
        except (RuntimeError, NotImplementedError):
            return 0


class TraceMode(TorchFunctionMode):
    """Records (line, op, output copy, inputs) for every torch function called from ``filename``."""

    def __init__(self, filename: str, inputs=()):
        super().__init__()
        self.filename = filename
        self.records: list[dict] = []
        self.elements = 0
        self.source: dict[int, int] = {id(t): -1 - i for i, t in enumerate(inputs)}  # tensor id -> record or -1-input
        self.alive: list[torch.Tensor] = list(inputs)  # keeps ids unique while the call runs
        self.storages = {storage(t): -1 - i for i, t in enumerate(inputs) if storage(t)}  # a view of input i writes it too

    def _line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if len(self.records) >= MAX_RECORDS:
            return out
        outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        if not outputs and getattr(func, "__name__", "") == "__setitem__" and args and isinstance(args[0], torch.Tensor):
            outputs = [args[0]]  # out[..., rows, :] = block: the target is what it makes
        if not outputs:
            return out
        line = self._line()
        if line is None:
            return out
        used = sorted({self.source[id(t)] for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and id(t) in self.source})
        shown = next((t for t in outputs if t.is_floating_point()), outputs[0])
        copy = None
        if shown.layout == torch.strided and shown.dtype in NAMES and self.elements + shown.numel() <= MAX_ELEMENTS:
            with torch._C.DisableTorchFunction():
                copy = shown.detach().clone()
            self.elements += shown.numel()
        index = len(self.records)
        name = op_name(func)
        written = 0  # -1 - i: the op wrote call input i, itself or through a view
        if name.endswith("_") and not name.endswith("__") or name in IN_PLACE:
            target = outputs[0] if out is None else out
            written = self.source.get(id(target), 0)
            if written >= 0 and isinstance(target, torch.Tensor):
                written = self.storages.get(storage(target), 0)
        self.records.append({"line": line, "op": name, "tensor": copy, "shape": list(shown.shape),
                             "dtype": str(shown.dtype).removeprefix("torch."), "inputs": used,
                             "mutates": -1 - written if written < 0 else -1})  # fmt: skip
        for t in outputs:
            self.source[id(t)] = index
            self.alive.append(t)
        return out
