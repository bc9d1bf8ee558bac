"""Find the user's projection weights so the reference can be built from them.

The reference for mha/causal must use the module's own weights; this module recognises the
accepted attribute names and exposes the projections as functions of a name->tensor dict,
so the same code runs on the user's parameters and on float64 copies of them. Everything is read
from the module objects (getattr / get_submodule), never from state-dict keys: a projection
registered under two names (an alias of the same Linear) has one state-dict key, but both names work.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from drill.text.messages import Ev

# wq: Meta's llama, Mistral, llama2.c; query/key/value: BERT; q/k/v: what candidates write on a whiteboard
SEPARATE = (("W_q", "W_k", "W_v"), ("q_proj", "k_proj", "v_proj"), ("wq", "wk", "wv"), ("query", "key", "value"), ("q", "k", "v"))
SEPARATE_OUT = {("W_q", "W_k", "W_v"): ("W_o",), ("q_proj", "k_proj", "v_proj"): ("o_proj", "out_proj"), ("wq", "wk", "wv"): ("wo",),
                ("query", "key", "value"): ("out", "dense"), ("q", "k", "v"): ("out", "o", "proj")}  # fmt: skip
FUSED = ("qkv", "c_attn")
FUSED_OUT = ("out", "o_proj", "out_proj", "c_proj", "W_o", "proj")  # proj: timm's ViT attention
LISTED = ("linears",)  # the Annotated Transformer: clones(nn.Linear(d_model, d_model), 4) = q, k, v, out

ACCEPTED = Ev(
    "separate Linear layers W_q, W_k, W_v with W_o; or q_proj, k_proj, v_proj with o_proj or out_proj; or wq, wk, wv with wo; "
    "or query, key, value with out or dense; or q, k, v with out, o or proj; "
    "or one fused Linear(d_model, 3*d_model) named qkv or c_attn (split q, k, v) "
    "with an output Linear named out, o_proj, out_proj, c_proj, W_o or proj; "
    "or a ModuleList of four Linear(d_model, d_model) named linears (q, k, v, out)"
)


@dataclass(frozen=True)
class Layout:
    qkv: tuple[str, ...]  # three separate Linear names, or one fused Linear name
    out: str

    @property
    def fused(self) -> bool:
        return len(self.qkv) == 1

    def describe(self) -> Ev:
        if self.fused:
            return Ev("fused {qkv} + {out}", qkv=self.qkv[0], out=self.out)
        return Ev("separate {qkv} + {out}", qkv="/".join(self.qkv), out=self.out)

    def params(self, module: nn.Module) -> dict[str, torch.Tensor]:
        """The projection parameters, keyed ``<layer>.weight`` / ``<layer>.bias`` by this layout's names."""
        found = {}
        for layer in (*self.qkv, self.out):
            linear = submodule(module, layer)
            for p in ("weight", "bias"):
                if isinstance(getattr(linear, p, None), torch.Tensor):
                    found[f"{layer}.{p}"] = getattr(linear, p)
        return found

    def project_qkv(self, x, params):
        if self.fused:
            return tuple(_linear(x, params, self.qkv[0]).chunk(3, dim=-1))
        return tuple(_linear(x, params, name) for name in self.qkv)

    def project_out(self, y, params):
        return _linear(y, params, self.out)


def _linear(x, params, name):
    return torch.nn.functional.linear(x, params[f"{name}.weight"], params.get(f"{name}.bias"))


def is_linear(layer, in_features: int, out_features: int) -> bool:
    return isinstance(layer, nn.Linear) and (layer.in_features, layer.out_features) == (in_features, out_features)


def submodule(module: nn.Module, dotted: str):
    """``module.get_submodule(dotted)`` (``linears.0``), or None when there is none."""
    try:
        return module.get_submodule(dotted)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None


def find_layout(module: nn.Module, d_model: int) -> Layout | None:
    """The first accepted layout whose Linear layers exist with the right sizes, else None."""

    def linear(name, out_features):
        return is_linear(submodule(module, name), d_model, out_features)

    out_names = [n for n in FUSED_OUT if linear(n, d_model)]
    for names in SEPARATE:
        if all(linear(n, d_model) for n in names):
            for out in SEPARATE_OUT[names]:
                if linear(out, d_model):
                    return Layout(names, out)
    for name in FUSED:
        if linear(name, 3 * d_model) and out_names:
            return Layout((name,), out_names[0])
    for name in LISTED:
        box = submodule(module, name)
        if isinstance(box, nn.ModuleList) and len(box) == 4 and all(linear(f"{name}.{i}", d_model) for i in range(4)):
            return Layout(tuple(f"{name}.{i}" for i in range(3)), f"{name}.3")
    return None
