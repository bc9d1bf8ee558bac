"""The value recorder behind ``drill grade --trace`` for code that computes in plain Python (bpe, lr_schedule,
beam_search), where the op recorder (:mod:`trace`) sees few or no torch calls.

It runs on the user side around one call of the user's code and decides nothing. With ``sys.settrace``
(``sys.monitoring`` needs Python 3.12; drill supports 3.11) it follows only the frames of functions in the
user's file (a comprehension's or a lambda's work shows in its caller's line) and, after each line, sends
back the locals that line bound or changed, as plain copies, plus each function's return value: the judge
matches them against the reference's intermediates (drill.grade.trace_values). Past MAX_RECORDS or
MAX_ELEMENTS it stops recording; the call goes on.

A copy is plain data only, made without calling anything of the user's (no ``__eq__``, ``__iter__``,
``__repr__``): numbers, bools, strings, bytes as ``{"bytes": [...]}``, lists, tuples, dicts as
``{"items": [[key, value], ...]}`` and small tensors. Anything else, or anything too big or too deep,
is sent as ``None`` with ``omitted`` naming its type.
"""

from __future__ import annotations

import math
import sys
import types

import torch

from .wire import NAMES

MAX_RECORDS = 3000  # a Python loop makes many more records than a torch function does
MAX_ELEMENTS = 400_000  # leaves of all copies together
MAX_LEAVES = 4096  # one value's leaves: larger is omitted (the trace input is small)
MAX_DEPTH = 8
MAX_STR = 1000
MAX_INT = 2**63
SCALARS = (bool, int, float, str, bytes, type(None))  # immutable: the same object is the same value
SKIPPED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)


class Omit(Exception):
    """A value that is not plain data, or too big to copy; the reason is a key (the judge reads only that it was omitted)."""


def copy(value, budget: list[int], depth: int = 0):
    """A plain copy of ``value``; ``budget[0]``: leaves left. Raises :class:`Omit`."""
    kind = type(value)
    if depth > MAX_DEPTH:
        raise Omit("nested too deeply")  # shown as is
    budget[0] -= 1
    if budget[0] < 0:
        raise Omit("too big")  # shown as is
    if value is None or kind is bool or kind is float:
        return value
    if kind is int:
        if -MAX_INT <= value < MAX_INT:
            return value
        raise Omit("int")
    if kind is str:
        if len(value) <= MAX_STR:
            return value
        raise Omit("str")
    if kind in (bytes, bytearray):
        if len(value) > MAX_LEAVES:
            raise Omit("bytes")
        budget[0] -= len(value)
        return {"bytes": list(value)}
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        with torch._C.DisableTorchFunction():
            if value.layout != torch.strided or value.dtype not in NAMES or value.is_meta or value.numel() > MAX_LEAVES:
                raise Omit("tensor")
            budget[0] -= value.numel()
            if budget[0] < 0:
                raise Omit("too big")  # shown as is
            return value.detach().to("cpu", copy=True)
    if issubclass(kind, (list, tuple)):  # the base class's own methods: a subclass's overrides never run
        size = list.__len__(value) if issubclass(kind, list) else tuple.__len__(value)
        if size > MAX_LEAVES:
            raise Omit("too long")  # shown as is
        items = [copy(x, budget, depth + 1) for x in (list.__iter__(value) if issubclass(kind, list) else tuple.__iter__(value))]
        return items if issubclass(kind, list) else tuple(items)
    if issubclass(kind, dict):  # Counter, defaultdict too
        if dict.__len__(value) > MAX_LEAVES:
            raise Omit("too long")  # shown as is
        return {"items": [[copy(k, budget, depth + 1), copy(v, budget, depth + 1)] for k, v in dict.items(value)]}
    raise Omit(kind.__name__)


def same(a, b) -> bool:
    """Two plain copies are equal (tensors by value, dtype and shape)."""
    if type(a) is not type(b):
        return False
    if type(a) is torch.Tensor:
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        return bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else torch.equal(a, b)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b or type(a) is float and math.isnan(a) and math.isnan(b)


OMITTED = object()


class FrameTrace:
    """The local trace function of one call of a user function: what each line changed."""

    def __init__(self, recorder: ValueRecorder, frame):
        self.recorder, self.call, self.fn = recorder, recorder.calls, frame.f_code.co_name[:100]
        recorder.calls += 1
        self.line = frame.f_lineno
        self.raised = False
        self.seen: dict[str, tuple[int, object]] = {}  # name -> (id, copy or OMITTED)
        self.changes(frame, record=False)  # the arguments are the inputs, not something a line made

    def changes(self, frame, record: bool = True) -> None:
        recorder = self.recorder
        for name, value in list(frame.f_locals.items()):
            if name.startswith(("__", ".")) or issubclass(type(value), SKIPPED):
                continue
            before = self.seen.get(name)
            if before is not None and before[0] == id(value) and type(value) in SCALARS:
                continue
            try:
                plain, why = copy(value, [MAX_LEAVES]), None
            except Omit as exc:
                plain, why = OMITTED, str(exc)
            if before is not None and (before[1] is OMITTED and plain is OMITTED and before[0] == id(value)
                                       or before[1] is not OMITTED and plain is not OMITTED and same(before[1], plain)):  # fmt: skip
                continue
            self.seen[name] = (id(value), plain)
            if record:
                recorder.add(self, self.line, name[:100], plain, why)

    def __call__(self, frame, event, arg):
        recorder = self.recorder
        if recorder.full:
            frame.f_trace_lines = False
            return self
        try:
            if event == "line":
                self.changes(frame)
                self.line = frame.f_lineno
                self.raised = False
            elif event == "exception":
                self.raised = True
            elif event == "return" and not self.raised:
                self.changes(frame)
                try:
                    plain, why = copy(arg, [MAX_LEAVES]), None
                except Omit as exc:
                    plain, why = OMITTED, str(exc)
                recorder.add(self, frame.f_lineno, "return", plain, why)
        except Exception:  # noqa: BLE001 - a fault of the recorder must not become the user's failure
            recorder.full = True
        return self


class ValueRecorder:
    """``with ValueRecorder(filename):`` around one call; ``records`` afterwards."""

    def __init__(self, filename: str):
        self.filename = filename
        self.records: list[dict] = []
        self.elements = 0
        self.calls = 0
        self.full = False
        self.previous = None

    def add(self, frame: FrameTrace, line: int, name: str, plain, why: str | None) -> None:
        size = _leaves(plain)
        if len(self.records) >= MAX_RECORDS or self.elements + size > MAX_ELEMENTS:
            self.full = True
            return
        self.elements += size
        self.records.append({"line": line, "name": name, "call": frame.call, "fn": frame.fn,
                             "value": None if plain is OMITTED else plain, "omitted": why[:40] if plain is OMITTED else None})  # fmt: skip

    def start(self, frame, event, arg):
        code = frame.f_code
        if self.full or code.co_filename != self.filename or code.co_name.startswith("<"):
            return None
        try:
            return FrameTrace(self, frame)
        except Exception:  # noqa: BLE001
            self.full = True
            return None

    def __enter__(self):
        self.previous = sys.gettrace()
        sys.settrace(self.start)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.previous)
        return False


def _leaves(plain) -> int:
    if type(plain) is torch.Tensor:
        return max(plain.numel(), 1)
    if type(plain) in (list, tuple):
        return 1 + sum(_leaves(x) for x in plain)
    if type(plain) is dict:
        return 1 + sum(_leaves(x) for x in plain.get("items", plain.get("bytes", ())))
    return 1
