"""Watchers that run around the user's calls: the builtin-attention rule, the largest tensor, no drill.

They run inside the user's process, so a determined file can switch them off; what makes the
verdict safe is that the judge, not this process, decides: a hidden builtin still has to
produce the right numbers, and every check is computed from what comes back.
"""

from __future__ import annotations

import functools

import torch
from torch.overrides import TorchFunctionMode, handle_torch_function
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .loader import Ev

BUILTIN_NAMES = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "multi_head_attention_forward": "F.multi_head_attention_forward (nn.MultiheadAttention)",
    "_native_multi_head_attention": "torch._native_multi_head_attention",
}
BUILTIN_PREFIXES = ("_scaled_dot_product", "_flash_attention", "_efficient_attention", "_cudnn_attention")
DRILL_RULE = Ev("the whiteboard rule: a graded file may not import drill or any module of it; write the code yourself")


def builtin_name(func) -> str | None:
    name = getattr(func, "__name__", "") or ""
    name = name.split(".")[0]  # torch.ops overloads: "_scaled_dot_product_attention_math.default"
    if name in BUILTIN_NAMES:
        return BUILTIN_NAMES[name]
    if name.startswith(BUILTIN_PREFIXES):
        return f"torch.ops.aten.{name}"
    return None


# Python-level builtins a task may forbid (TASK.forbidden keys): they call no torch function of their
# own name, so each is wrapped to pass through handle_torch_function, where BuiltinSpy sees it by name.
PYTHON_BUILTINS = {
    "torch.nn.utils": ("clip_grad_norm_", "clip_grad_norm", "clip_grads_with_norm_", "get_total_norm", "clip_grad_value_"),
    "torch.nn.utils.clip_grad": ("clip_grad_norm_", "clip_grad_norm", "clip_grads_with_norm_", "get_total_norm",
                                 "clip_grad_value_", "_clip_grads_with_norm_", "_get_total_norm"),  # fmt: skip
    "torch.optim.adam": ("adam",),  # the functional Adam/AdamW step (Adam.__init__ is wrapped below)
    "torch.optim.adamw": ("adamw",),
    "torch.optim._functional": ("adam", "adamw"),
}


def _visible(func, name: str):
    """``func``, but seen by an active TorchFunctionMode as a function called ``name``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if torch._C._is_torch_function_mode_enabled():
            return handle_torch_function(wrapper, (), *args, **kwargs)
        return func(*args, **kwargs)

    wrapper.__name__ = name
    return wrapper


def watch_python_builtins() -> None:
    """Make clip_grad_norm_, the LR schedulers and Adam(W) visible to the builtin rule, before the user's file
    imports them (so ``from torch.nn.utils import clip_grad_norm_`` binds the watched one too)."""
    import importlib

    wrapped: dict[int, object] = {}
    for module_name, names in PYTHON_BUILTINS.items():
        module = importlib.import_module(module_name)
        for name in names:
            func = getattr(module, name, None)
            if callable(func):
                key = id(getattr(func, "__wrapped__", func))
                wrapped.setdefault(key, _visible(func, name.lstrip("_")))
                setattr(module, name, wrapped[key])
    from torch.optim import Adam
    from torch.optim.lr_scheduler import LRScheduler

    LRScheduler.__init__ = _visible(LRScheduler.__init__, "LRScheduler")  # every scheduler calls it
    Adam.__init__ = _visible(Adam.__init__, "Adam")  # AdamW's calls it too


class BuiltinSpy(TorchFunctionMode):
    """Records the torch attention builtins (and a task's ``extra`` ones, by function name: display
    name) called while active; changes nothing else."""

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()
        self.extra: dict[str, str] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = builtin_name(func) or self.extra.get(getattr(func, "__name__", ""))
        if name:
            self.seen.add(name)
        return func(*args, **(kwargs or {}))


class DispatchMode(TorchDispatchMode):
    """A TorchDispatchMode that torch does not wrap for dynamo: the wrapper imports torch._dynamo on
    the first op (about a second, in every fresh user side), and no grade compiles anything."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False


class AtenSpy(DispatchMode):
    """The same rule one level down: every SDPA backend is an aten op that reaches the dispatcher,
    even when the call bypassed torch functions (``torch._C.DisableTorchFunction``)."""

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()
        self.extra: dict[str, str] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = getattr(func, "overloadpacket", func)
        name = builtin_name(packet) or self.extra.get(getattr(packet, "__name__", ""))
        if name:
            self.seen.add(Ev("{name} (at the aten level)", name=name) if name.startswith("torch.ops") else name)
        return func(*args, **(kwargs or {}))


class LargestTensor(DispatchMode):
    """Records the largest storage any aten op produces (storage, so broadcast views count as small)."""

    def __init__(self):
        super().__init__()
        self.size, self.shape, self.op = 0, (), ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.layout == torch.strided:
                size = t.untyped_storage().nbytes() // max(t.element_size(), 1)
                if size > self.size:
                    self.size, self.shape, self.op = size, tuple(t.shape), str(func)
        return out


class RuleImportError(ImportError):
    """Raised for ``import drill`` (any module of it) from the user's file."""


class NoDrill:
    """A meta-path finder that refuses drill itself, whatever sys.path holds."""

    def find_spec(self, name, path=None, target=None):
        if name == "drill" or name.startswith("drill."):
            raise RuleImportError(DRILL_RULE)
        return None
