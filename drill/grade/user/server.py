"""The call server of the user side: import the user's file, run its code on tensors the judge
sends, send back the tensors it produced. It decides nothing: no reference, no tolerance, no report.

Requests and replies are frames of :mod:`wire`. Objects that are not plain data (the user's
module, a cache object) stay here as handles. Autograd through the user's code runs here too:
a call whose inputs require grad keeps its graph until the judge sends ``release``, and ``vjp``
answers one vector-Jacobian product of it.
"""

from __future__ import annotations

import errno
import inspect
import os
import resource
import sys
import traceback
from pathlib import Path

import torch
from torch import nn

from . import kernel_guard, measure, params, toys, trace, value_trace, wire  # noqa: F401 - imported before the user's code can take the descriptors an import needs
from .loader import Ev, UserCodeError, describe_exception, exception_text, load_user_file, type_name, user_frames
from .spy import AtenSpy, BuiltinSpy, LargestTensor, NoDrill, RuleImportError

MODULE_KINDS = {cls: cls.__name__ for cls in (nn.Linear, nn.LayerNorm, nn.GELU, nn.ReLU, nn.Dropout, nn.Sequential,
                                               nn.ModuleList, nn.ModuleDict, nn.Identity)}  # fmt: skip
MAX_ATTRS = 64
RETURNED = Ev("to read what it returned")
DOING = {"call": RETURNED, "call_each": RETURNED, "trace": RETURNED, "value_trace": RETURNED,
         "instantiate": Ev("to read the module your class built"), "describe": Ev("to read the module it returned"),
         "attr": Ev("to read an attribute"), "assign": Ev("to set parameters"), "vjp": Ev("for the backward pass"),
         "signature": Ev("to read a signature")}  # fmt: skip


class Failed(Exception):
    """A failure of the user's code, sent to the judge as its message (as data) and ``kind``."""

    def __init__(self, message: Ev | str, kind: str = "user"):
        super().__init__(message)
        self.kind = kind


def is_out_of_memory(exc: BaseException) -> bool:
    """An allocation that failed (the memory cap), not a MemoryError the user's code raised itself."""
    text = exception_text(exc)
    return (isinstance(exc, MemoryError) and not text) or "can't allocate memory" in text or "not enough memory" in text  # shown as is


class Server:
    def __init__(self, devices):
        self.devices = tuple(devices)
        self.path: Path | None = None
        self.module = None
        self.objects: dict[int, object] = {}
        self.graphs: dict[int, tuple[list, list]] = {}
        self.functions, self.aten = BuiltinSpy(), AtenSpy()
        self.op = ""
        if any(d.startswith("cuda") for d in self.devices):  # the judge's references run without TF32 too
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

    # --- handles ---------------------------------------------------------------

    def keep(self, obj) -> wire.Handle:
        self.objects[id(obj)] = obj
        return wire.Handle(id(obj))

    def lookup(self, number: int):
        if number not in self.objects:
            raise wire.WireError(f"no object {number}")
        return self.objects[number]

    def reply(self, value=None, **fields):
        collected: list[torch.Tensor] = []
        header, buffers = wire.encode(value, fallback=self.keep, collect=collected)
        return {**header, **fields}, buffers, collected

    def failure(self, exc: BaseException, during=None) -> Failed:
        """The user's exception as a Failed; ``during(what)``: its description within what drill was doing."""
        if is_out_of_memory(exc):
            return Failed(exception_text(exc) or "MemoryError", "memory")
        what = describe_exception(exc, self.path)
        return Failed(during(what) if during else what, "not-implemented" if isinstance(exc, NotImplementedError) else "user")

    # --- ops -------------------------------------------------------------------

    def op_load(self, path: str):
        self.path = Path(path)
        sys.meta_path.insert(0, NoDrill())
        try:
            self.module = load_user_file(self.path)
            kernel_guard.install()  # a file that imported triton: its interpreted launches get guard bands
        except UserCodeError as exc:
            rule = isinstance(exc.original, RuleImportError)
            raise Failed(exc.args[0], "rule" if rule else ("memory" if is_out_of_memory(exc.original) else "import")) from None
        kinds = {n: "class" if isinstance(v, type) else "function" if callable(v) else "other"
                 for n, v in vars(self.module).items() if not n.startswith("__")}  # fmt: skip
        return self.reply(kinds)

    def op_entry(self, name: str):
        value = getattr(self.module, name, None)
        return self.reply(None if value is None else self.keep(value))

    def call_user(self, fn, args, kwargs, watch: bool):
        try:
            if not watch:
                return fn(*args, **kwargs)
            with self.functions, self.aten:
                return fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - the user's failure is the finding, KeyboardInterrupt too
            raise self.failure(exc) from None

    def op_call(self, target, args, kwargs, inputs, id: int, watch=True, track=False, params=False, largest=False):
        fn = target
        before = [t.detach().clone() for t in inputs]
        spy = None
        if largest:
            spy = LargestTensor()
            with torch.no_grad(), spy:
                result = self.call_user(fn, args, kwargs, watch)
        else:
            result = self.call_user(fn, args, kwargs, watch)
        mutated = [i for i, (t, old) in enumerate(zip(inputs, before)) if not _same(t, old)]
        changed = [inputs[i].detach() for i in mutated]
        try:
            header, buffers, collected = self.reply((result, changed), mutated=mutated,
                                                    largest=[spy.size, list(spy.shape), spy.op[:200]] if spy else None)  # fmt: skip
        except wire.Unsendable as exc:
            raise Failed(Ev("returned {what}: drill cannot check it", what=exc.args[0])) from None
        if track:
            wanted = [t for t in inputs if t.requires_grad]
            if params:
                wanted += list(fn.parameters())
            self.graphs[id] = (collected[: len(collected) - len(changed)], wanted)
        return header, buffers, collected

    def op_call_each(self, target, args, watch=True):
        """``target(*a)`` for each ``a`` of ``args``, with no gradient: the results of the calls, in order."""
        with torch.no_grad():
            results = [self.call_user(target, a, {}, watch) for a in args]
        try:
            return self.reply(results)
        except wire.Unsendable as exc:
            raise Failed(Ev("returned {what}: drill cannot check it", what=exc.args[0])) from None

    def op_trace(self, target, args, kwargs, inputs):
        """One call under the op recorder (drill grade --trace): its result and, per op called from the
        user's file, the line, the op, a copy of the output and the records it consumed."""
        from .trace import TraceMode

        return self.recorded(TraceMode(str(self.path.resolve()), inputs), target, args, kwargs)

    def op_value_trace(self, target, args, kwargs):
        """One call under the value recorder (drill grade --trace for plain-Python tasks): its result and,
        per line of the user's file that ran, the locals it bound or changed, as plain copies."""
        from .value_trace import ValueRecorder

        return self.recorded(ValueRecorder(str(self.path.resolve())), target, args, kwargs)

    def recorded(self, recorder, target, args, kwargs):
        """(result, records, what it raised or None): the records up to an exception still show where it went wrong."""
        result, raised = None, None
        try:
            with torch.no_grad(), recorder:
                result = self.call_user(target, args, kwargs, False)
        except Failed as exc:
            if exc.kind == "memory":
                raise
            raised = str(exc)
        try:
            return self.reply((result, recorder.records, raised))
        except wire.Unsendable as exc:
            raise Failed(Ev("returned {what}: drill cannot check it", what=exc.args[0])) from None

    def op_vjp(self, id: int, grads):
        outs, wanted = self.graphs[id]
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        found = [None] * len(wanted)
        differentiable = [i for i, w in enumerate(wanted) if w.requires_grad]
        if pairs and differentiable:
            try:
                got = vjp(pairs, [wanted[i] for i in differentiable])
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's backward failed
                raise self.failure(exc, lambda what: Ev("the backward pass {what}", what=what)) from None
            for i, g in zip(differentiable, got):
                found[i] = g
        return self.reply(found)

    def op_release(self):
        self.graphs.clear()
        return self.reply()

    def op_signature(self, target, attr=None):
        """How ``target`` (or its ``attr``, e.g. a class's forward) is called: its text and parameters, or None."""
        obj = getattr(target, attr, None) if attr else target
        try:
            sig = inspect.signature(obj)
        except Exception:  # noqa: BLE001 - a builtin, or a __signature__ of the user's that raises: no signature
            return self.reply(None)
        params = [p for p in sig.parameters.values()]
        if attr and params and params[0].name == "self":
            params = params[1:]
            sig = sig.replace(parameters=params)
        name = getattr(target, "__name__", "?") + (f".{attr}" if attr else "")
        described = [[p.name, p.kind.name, p.default is not inspect.Parameter.empty] for p in params]
        return self.reply({"text": f"{name}{sig}"[:500], "params": described[:64]})

    def op_instantiate(self, cls, args, seed: int, device: str, dtype: str, kwargs=None):
        torch.manual_seed(seed)
        name = getattr(cls, "__name__", Ev("the class"))
        name = name if type(name) is Ev else f"{name}"
        module = self.call_user(cls, args, kwargs or {}, True)
        if not issubclass(type(module), nn.Module):  # type(), not isinstance: a fake __class__ cannot pass
            raise Failed(Ev("{name}(...) is not an nn.Module", name=name))
        try:
            module = module.to(device, wire.DTYPES[dtype]).eval()
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            raise self.failure(exc, lambda what: Ev("{name}(...).to({device}, {dtype}) {what}", name=name, device=device, dtype=dtype,
                                                    what=what)) from None  # fmt: skip
        return self.reply(self.module_tree(module))

    def module_tree(self, module: nn.Module) -> dict:
        """What the judge's shadow of ``module`` is rebuilt from: a handle, its submodules, its parameter names."""
        tree, first = [], {}
        for path, sub in module.named_modules(remove_duplicate=False):  # an alias is the same module under a second name
            if id(sub) in first:
                tree.append({"path": path, "alias": first[id(sub)]})
            else:
                first[id(sub)] = path
                tree.append(describe_module(path, sub))
        return {"module": self.keep(module), "tree": tree, "params": [n for n, _ in module.named_parameters()]}

    def op_attr(self, target, path: str):
        """``target.path`` (dotted; a ModuleList's index is a name too): a submodule or a bound method comes
        back as a handle (an expert of an MoE, LoRA's ``merged``), a tensor as data."""
        obj = target
        for name in str(path).split("."):
            if not (name.isidentifier() or name.isdigit()):
                raise wire.WireError(f"attribute path {path!r}")
            try:
                obj = getattr(obj, name)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - a missing attribute is the user's finding
                raise self.failure(exc, lambda what: Ev("reading .{path}: {what}", path=path, what=what)) from None
        try:
            return self.reply(obj)
        except wire.Unsendable as exc:
            raise Failed(Ev(".{path} is {what}: drill cannot check it", path=path, what=exc.args[0])) from None

    def op_describe(self, target):
        """The tree of a module the user's code returned (LoRA's merged layer), as for an instantiated one."""
        if not issubclass(type(target), nn.Module):
            raise Failed(Ev("returned a {type}, not an nn.Module", type=type_name(target)))
        return self.reply(self.module_tree(target))

    def op_assign(self, target, params: dict):
        """Overwrite parameters of a module by name, in place (the judge's values for a zero-initialised
        LoRA B): the judge chooses them so that every part of the forward pass shows in its output."""
        named = dict(target.named_parameters()) if issubclass(type(target), nn.Module) else {}
        with torch.no_grad():
            for name, value in params.items():
                p = named.get(name)
                if p is None or p.shape != value.shape:
                    raise Failed(Ev("has no parameter {name} of shape {shape} to set", name=repr(name), shape=list(value.shape)))
                p.copy_(value)
        return self.reply()

    def op_forbid(self, names: dict):
        """Also watch a task's own builtins (function name: display name), e.g. torch.softmax."""
        self.functions.extra = self.aten.extra = {str(k): str(v) for k, v in names.items()}
        return self.reply()

    def op_rules(self):
        seen = sorted(self.functions.seen) or sorted(self.aten.seen)
        return self.reply([name.to_wire() if type(name) is Ev else name for name in seen])

    def op_bench(self, target, args, median=False):
        """[seconds, peak bytes] of ``target(*args)``; ``median``: a kernel's CUDA median (measure.cuda_median)."""

        def fn(*a):
            with torch.no_grad():
                return target(*a)

        timer = measure.cuda_median if median else measure.seconds
        try:
            return self.reply([timer(fn, *args), measure.peak_bytes(fn, *args)])
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            raise self.failure(exc) from None

    def blame(self, exc: BaseException) -> Failed | None:
        """An exception that escaped this server while it answered a request: the user's when their file is
        on its traceback (a dunder, a property, a ``__torch_function__`` or a ``named_modules`` of theirs
        that drill ran to read an object) or when their code used up what the server needs (descriptors,
        memory); None when it is drill's own fault."""
        if isinstance(exc, wire.Unsendable):
            return Failed(Ev("gave drill {what}, which it cannot check", what=exc.args[0]))
        if self.path is not None and user_frames(exc, self.path):
            return Failed(Ev("{what}, in code of yours that drill ran {doing}", what=describe_exception(exc, self.path),
                             doing=DOING.get(self.op) or Ev("to answer a request")))  # fmt: skip
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            return Failed(Ev("left drill's side of the process no file descriptor to open ({error}; RLIMIT_NOFILE is {limit}: "
                             "did your code lower it or leave files open?)", error=exception_text(exc), limit=soft))  # fmt: skip
        if is_out_of_memory(exc):
            return Failed(exception_text(exc) or "MemoryError", "memory")
        return None

    def handle(self, header: dict, payload: bytes):
        tensors = wire.tensors_of(header, payload, self.devices)
        for t, d in zip(tensors, header["tensors"]):
            if d["grad"] and t.is_floating_point():
                t.requires_grad_()
        request = wire.build(header["value"], tensors, self.lookup, recipes=True)
        op = self.op = request.pop("op")
        if op in ("call", "trace"):
            request["inputs"] = tensors
        return getattr(self, f"op_{op}")(**request)


def vjp(pairs: list[tuple[torch.Tensor, torch.Tensor]], inputs: list[torch.Tensor]) -> tuple:
    """The gradients of ``inputs`` for (output, its gradient) ``pairs``, the graphs kept. The backward of the
    scalar sum(output * gradient) hands each output its gradient exactly (1.0 * g), as grad_outputs would; but
    autograd.grad with grad_outputs imports sympy to compare their shapes (0.6 s of CPU in each process)."""
    total = sum((o * g).sum() for o, g in pairs)
    return torch.autograd.grad([total], inputs, retain_graph=True, allow_unused=True)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Unchanged by the call (NaN equal to NaN)."""
    a = a.detach()
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def describe_module(path: str, module: nn.Module) -> dict:
    attrs = {k: v for k, v in list(vars(module).items())[:200] if not k.startswith("_") and _scalar(v)}
    for name in ("in_features", "out_features", "eps", "approximate", "p", "elementwise_affine"):
        if hasattr(module, name) and _scalar(getattr(module, name)):
            attrs[name] = getattr(module, name)
    if issubclass(type(module), nn.LayerNorm):
        attrs["normalized_shape"] = list(module.normalized_shape)
    return {
        "path": path,
        "kind": MODULE_KINDS.get(type(module), "Module"),
        "class": type_name(module),
        "attrs": dict(list(attrs.items())[:MAX_ATTRS]),
        "params": {n: p.detach() for n, p in module.named_parameters(recurse=False)},
    }


def _scalar(v) -> bool:
    """A plain attribute the judge may read (an int within what the wire carries)."""
    return type(v) in (float, bool, str) or (type(v) is int and -wire.INT_BOUND <= v < wire.INT_BOUND)


def serve(sock, devices) -> None:
    """Answer requests until the judge closes the channel."""
    server = Server(devices)
    while True:
        try:
            header, payload = wire.recv(sock)
        except EOFError:
            os._exit(0)
        try:
            out_header, buffers, _ = server.handle(header, payload)
        except BaseException as exc:  # noqa: BLE001 - the user's (see Server.blame), else a fault of this server
            try:
                found = exc if isinstance(exc, Failed) else server.blame(exc)
            except Exception:  # noqa: BLE001 - an exception that cannot even be examined: drill's to debug
                found = None
            if found is not None:
                message = found.args[0]
                out_header, buffers = {"value": None, "tensors": [], "kind": found.kind,
                                       "error": message.to_wire() if isinstance(message, Ev) else str(message)}, []  # fmt: skip
            else:
                text = traceback.format_exc()
                out_header, buffers = {"value": None, "tensors": [], "error": f"{type_name(exc)}: {exception_text(exc)}",
                                       "kind": "internal", "traceback": text}  # fmt: skip
                buffers = []
        wire.send(sock, out_header, buffers)
