"""The whiteboard rule, enforced at run time: no calls into torch's own attention.

A TorchFunctionMode sees every torch call the user's code makes, however it was spelled
(aliases, getattr, nn.MultiheadAttention), which a text search cannot.
"""

from __future__ import annotations

from torch.overrides import TorchFunctionMode

BUILTIN_NAMES = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "multi_head_attention_forward": "F.multi_head_attention_forward (nn.MultiheadAttention)",
    "_native_multi_head_attention": "torch._native_multi_head_attention",
}
BUILTIN_PREFIXES = ("_scaled_dot_product", "_flash_attention", "_efficient_attention")


def builtin_name(func) -> str | None:
    name = getattr(func, "__name__", "") or ""
    name = name.split(".")[0]  # torch.ops overloads: "_scaled_dot_product_attention_math.default"
    if name in BUILTIN_NAMES:
        return BUILTIN_NAMES[name]
    if name.startswith(BUILTIN_PREFIXES):
        return f"torch.ops.aten.{name}"
    return None


class BuiltinSpy(TorchFunctionMode):
    """Records the torch attention builtins called while active; changes nothing else."""

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = builtin_name(func)
        if name:
            self.seen.add(name)
        return func(*args, **(kwargs or {}))
