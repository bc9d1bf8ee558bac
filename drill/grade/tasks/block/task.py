"""The ``block`` task: a Pre-LN Transformer block graded against a reference built from its own weights.

``TransformerBlock(d_model, n_heads, d_ff)``: x = x + attn(ln1(x)); x = x + ffn(ln2(x)), with causal
self-attention. The block's submodules are found by name (see ACCEPTED); an FFN activation that
lives in ``forward`` rather than in an nn.Sequential is recognised by which candidate matches.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import Layout, find_layout, is_linear, submodule
from drill.grade.reference import CORRECT, Variant, module_attention
from drill.grade.checks.drawn_heads import DrawnHeadsTask
from drill.grade.checks.module import BASE, NO_LAYOUT, Built
from drill.grade.checks.variance import one_pass_verdict
from drill.text.messages import Ev

LN_NAMES = (("ln1", "ln_1", "norm1"), ("ln2", "ln_2", "norm2"))
ATTN_NAMES = ("attn", "self_attn", "attention")
FFN_NAMES = ("ffn", "mlp", "ff", "feed_forward")
FFN_PAIRS = (("fc1", "fc2"), ("c_fc", "c_proj"), ("linear1", "linear2"), ("w1", "w2"))
ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu-tanh": partial(F.gelu, approximate="tanh"),
    "relu": F.relu,
}
ACCEPTED = Ev(
    "LayerNorms named {ln1} and {ln2} (weight and bias of size d_model); "
    "attention named {attn}, or the block itself, with a projection layout of the mha task; "
    "an FFN named {ffn} as nn.Sequential(Linear, GELU or ReLU, Linear) (Dropout allowed), "
    "or Linear pairs {pairs} on the block or inside that FFN module",
    ln1="/".join(LN_NAMES[0]), ln2="/".join(LN_NAMES[1]), attn="/".join(ATTN_NAMES), ffn="/".join(FFN_NAMES),
    pairs=", ".join("/".join(p) for p in FFN_PAIRS),
)
OFFSET = 1e4  # float32: E[x²] ~ 1e8 keeps ~8 of absolute error, the variance ~1 is lost
D_FF_EXTRA = 8  # the grader builds TransformerBlock(d_model, n_heads, d_model + 8): d_ff never equals d_model


@dataclass(frozen=True)
class BlockVariant:
    """A block-level mistake on top of an attention mistake (``attn``)."""

    attn: Variant = CORRECT
    activation: str | None = None  # None: the one the layout declares or matched
    norm: str = "pre"  # | post: x = ln(x + sublayer(x))
    residual: tuple[bool, bool] = (True, True)  # around attention, around the FFN
    ln_axis: int = -1  # 1: normalised over the sequence axis


@dataclass(frozen=True)
class BlockLayout:
    ln1: str
    ln2: str
    attn: str
    attn_layout: Layout
    fc1: str
    fc2: str
    activation: str | None  # None: set in forward, recognised by matching

    @property
    def attn_prefix(self) -> str:
        return f"{self.attn}." if self.attn else ""

    def describe(self) -> Ev:
        layout = self.attn_layout.describe()
        attn = Ev("{name} ({layout})", name=self.attn, layout=layout) if self.attn else Ev("attention on the block ({layout})", layout=layout)
        act = self.activation or Ev("matched")
        return Ev("{ln1}, {attn}, {ln2}, {fc1} -> {act} -> {fc2}", ln1=self.ln1, attn=attn, ln2=self.ln2, fc1=self.fc1, act=act, fc2=self.fc2)

    def params(self, module: nn.Module) -> dict[str, torch.Tensor]:
        """Read from the module objects by this layout's names (an aliased submodule works under either name)."""
        found = {}
        for name in (self.ln1, self.ln2, self.fc1, self.fc2):
            sub = submodule(module, name)
            for p in ("weight", "bias"):
                if isinstance(getattr(sub, p, None), torch.Tensor):
                    found[f"{name}.{p}"] = getattr(sub, p)
        attn = self.attn_layout.params(module.get_submodule(self.attn))
        return {**found, **{self.attn_prefix + n: p for n, p in attn.items()}}


def declared(activations) -> str | None:
    """The activation an nn.Sequential FFN names, if exactly one GELU or ReLU."""
    if len(activations) != 1:
        return None
    if isinstance(activations[0], nn.ReLU):
        return "relu"
    return "gelu-tanh" if activations[0].approximate == "tanh" else "gelu"


def find_block_layout(module: nn.Module, d_model: int, d_ff: int) -> BlockLayout | None:
    def norm(names):
        for name in names:
            sub = getattr(module, name, None)
            w, b = getattr(sub, "weight", None), getattr(sub, "bias", None)
            if isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor) and w.shape == b.shape == (d_model,):
                return name
        return None

    def ffn():
        containers = [("", module)] + [(f"{n}.", getattr(module, n)) for n in FFN_NAMES if hasattr(module, n)]
        for prefix, box in containers:
            if isinstance(box, nn.Sequential):
                linears = [(n, c) for n, c in box.named_children() if isinstance(c, nn.Linear)]
                acts = [c for c in box.children() if isinstance(c, (nn.GELU, nn.ReLU))]
                if len(linears) == 2 and is_linear(linears[0][1], d_model, d_ff) and is_linear(linears[1][1], d_ff, d_model):
                    return prefix + linears[0][0], prefix + linears[1][0], declared(acts)
                continue
            for a, b in FFN_PAIRS:
                if is_linear(getattr(box, a, None), d_model, d_ff) and is_linear(getattr(box, b, None), d_ff, d_model):
                    return prefix + a, prefix + b, None
        return None

    ln1, ln2, found = norm(LN_NAMES[0]), norm(LN_NAMES[1]), ffn()
    if not (ln1 and ln2 and found):
        return None
    for name in (*ATTN_NAMES, ""):  # "": the projections sit on the block itself
        sub = getattr(module, name, None) if name else module
        attn_layout = find_layout(sub, d_model) if isinstance(sub, nn.Module) else None
        if attn_layout:
            return BlockLayout(ln1, ln2, name, attn_layout, *found)
    return None


def block_reference(x, params, layout: BlockLayout, n_heads: int, eps, variant: BlockVariant):
    """The Pre-LN block from the user's weights, with the mistake ``variant`` models."""
    prefix = layout.attn_prefix
    attn_params = {n[len(prefix) :]: p for n, p in params.items() if n.startswith(prefix)}
    act = (lambda z: z) if variant.activation == "none" else ACTIVATIONS[variant.activation]  # "none": the FFN-without-activation bug

    def ln(z, name):
        w, b = params[f"{name}.weight"], params[f"{name}.bias"]
        if variant.ln_axis == -1:
            return F.layer_norm(z, z.shape[-1:], w, b, eps[name])
        mean = z.mean(dim=variant.ln_axis, keepdim=True)
        var = z.var(dim=variant.ln_axis, keepdim=True, unbiased=False)
        return (z - mean) / torch.sqrt(var + eps[name]) * w + b

    def attn(z):
        return module_attention(z, attn_params, layout.attn_layout, n_heads, causal=True, variant=variant.attn)[0]

    def ffn(z):
        hidden = F.linear(z, params[f"{layout.fc1}.weight"], params.get(f"{layout.fc1}.bias"))
        return F.linear(act(hidden), params[f"{layout.fc2}.weight"], params.get(f"{layout.fc2}.bias"))

    for sublayer, norm_name, keep in ((attn, layout.ln1, variant.residual[0]), (ffn, layout.ln2, variant.residual[1])):
        if variant.norm == "post":
            x = ln((x if keep else 0) + sublayer(x), norm_name)
        else:
            x = (x if keep else 0) + sublayer(ln(x, norm_name))
    return x


class BlockTask(DrawnHeadsTask):
    roles = ("d_model", "n_heads", "d_ff")

    def __init__(self):
        super().__init__("block", causal=True)

    def init_args(self, d_model: int, n_heads: int) -> tuple:
        return (d_model, n_heads, d_model + D_FF_EXTRA)

    def build(self, ctx: Context, d_model: int, n_heads: int, dtype=torch.float32) -> Built:
        built = super().build(ctx, d_model, n_heads, dtype)
        layout = find_block_layout(built.module, d_model, d_model + D_FF_EXTRA)
        built = Built(built.module, n_heads, layout)
        if layout is not None and layout.activation is None:
            built = Built(built.module, n_heads, replace(layout, activation=self.match_activation(ctx, built)))
        return built

    def match_activation(self, ctx: Context, built: Built) -> str:
        """The candidate activation whose reference block is closest to the user's output."""
        x = ctx.randn(2, 4, built.module.get_submodule(built.layout.ln1).weight.shape[0], gen=ctx.generator(1500))
        out = self.forward(ctx, built.module, x.to(next(built.module.parameters()).dtype))
        errors = {}
        for name in ACTIVATIONS:
            trial = Built(built.module, built.n_heads, replace(built.layout, activation=name))
            errors[name] = (out.double() - self.reference(trial, x, None, torch.float64)).abs().max().item()
        return min(errors, key=errors.get)

    def reference(self, built: Built, x, mask, dtype, variant=CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        variant = variant if isinstance(variant, BlockVariant) else BlockVariant(attn=variant)
        if variant.activation is None:
            variant = replace(variant, activation=built.layout.activation)
        layout = built.layout
        eps = {name: getattr(built.module.get_submodule(name), "eps", 1e-5) for name in (layout.ln1, layout.ln2)}
        return block_reference(x.to(dtype), params, layout, built.n_heads, eps, variant)

    def layout_check(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("fail", Ev("unrecognised block layout; accepted: {accepted}", accepted=ACCEPTED))
        return outcome("pass", built.layout.describe())

    def large_offset_check(self, ctx: Context):
        """LayerNorm must subtract the mean before squaring: E[x^2] - E[x]^2 cancels at a large offset."""
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, BASE, 1600, torch.float64)
        x = (x + OFFSET).float().double()  # exactly representable, and so is x - OFFSET
        out, centred_out = (self.forward(ctx, built.module, z.float()) for z in (x, x - OFFSET))

        def ref(variant):
            def both(centred):
                z = x - OFFSET if centred else x
                return tuple(self.reference(built, z, None, dtype, variant) for dtype in (torch.float64, torch.float32))

            return both

        references = [(None, ref(CORRECT))] + [(code, ref(v)) for code, v in self.hypotheses(ctx)]
        return one_pass_verdict(Ev("output with every feature offset by 1e4"), out, centred_out, references)

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [d for d in super().checks(ctx) if d.id != "stability.large-logits"]
        return defs + [CheckDef("stability.large-offset", "stability", partial(self.large_offset_check, ctx))]

    def hypotheses(self, ctx: Context):
        found = [(code, BlockVariant(attn=v)) for code, v in super().hypotheses(ctx)]
        found += [
            ("block-post-ln", BlockVariant(norm="post")),
            ("block-missing-residual", BlockVariant(residual=(False, True))),
            ("block-missing-residual", BlockVariant(residual=(True, False))),
            ("block-missing-residual", BlockVariant(residual=(False, False))),
            ("block-layernorm-wrong-axis", BlockVariant(ln_axis=1)),
            ("causal-mask-missing", BlockVariant(attn=replace(CORRECT, causal="none"))),
        ]
        found = [(code, replace(v, activation=act)) for code, v in found for act in ACTIVATIONS]
        return found + [("block-ffn-no-activation", BlockVariant(activation="none"))]


TASK = BlockTask()
