"""The ``swiglu`` task: ``class SwiGLU(nn.Module)``, ``__init__(d_model, d_ff)``, ``forward(x)``.

``w2(silu(w1 x) * w3 x)`` (Shazeer 2020, as in LLaMA and PaLM), graded against a float64
reference built from the module's own weights: names ``w1, w2, w3`` (Meta's LLaMA code) or
``gate_proj, down_proj, up_proj`` (Hugging Face), all bias-free. ``F.silu`` is allowed: the task
is the gating, not the activation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import deterministic_check, dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, expect_shape, first_nonfinite
from drill.grade.checks.rows import row_independence_check, tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import is_linear
from drill.text.messages import Ev

D_MODEL, D_FF = 6, 10
X = (2, 5, D_MODEL)
LAYOUTS = (("w1", "w3", "w2"), ("gate_proj", "up_proj", "down_proj"))  # (gate, up, down)
ACCEPTED = Ev(
    "bias-free nn.Linear layers w1 (gate, d_model -> d_ff), w3 (up, d_model -> d_ff) and w2 (down, d_ff -> d_model), "
    "or gate_proj, up_proj and down_proj"
)
NO_LAYOUT = Ev("skipped: no reference without a recognised layout")


@dataclass(frozen=True)
class SwiGLUVariant:
    activation: str = "silu"  # silu (correct) | gelu | gelu-tanh | relu | sigmoid | none
    on: str = "gate"  # gate (correct): act(w1 x) * w3 x | up: w1 x * act(w3 x)
    gated: str = "both"  # both (correct) | gate-only: w2(act(w1 x)) | up-only: w2(act(w3 x))


CORRECT_SWIGLU = SwiGLUVariant()
ACTIVATIONS = {
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu-tanh": partial(F.gelu, approximate="tanh"),
    "relu": F.relu,
    "sigmoid": torch.sigmoid,
    "none": lambda z: z,
}


@dataclass(frozen=True)
class Built:
    module: object
    names: tuple[str, str, str] | None  # (gate, up, down) submodule names, None when unrecognised

    def weights(self, dtype):
        """(gate, up, down) as (weight, bias or None) in ``dtype``."""
        layers = (getattr(self.module, n) for n in self.names)
        return [(l.weight.detach().to(dtype), None if l.bias is None else l.bias.detach().to(dtype)) for l in layers]


def find_names(module, d_model: int, d_ff: int):
    for gate, up, down in LAYOUTS:
        layers = [getattr(module, n, None) for n in (gate, up, down)]
        if is_linear(layers[0], d_model, d_ff) and is_linear(layers[1], d_model, d_ff) and is_linear(layers[2], d_ff, d_model):
            return gate, up, down
    return None


def build(ctx: Context, dtype=torch.float32, d_model: int = D_MODEL, d_ff: int = D_FF) -> Built:
    module = ctx.instantiate((d_model, d_ff), dtype)
    return Built(module, find_names(module, d_model, d_ff))


def reference(x, weights, variant: SwiGLUVariant = CORRECT_SWIGLU):
    (wg, bg), (wu, bu), (wd, bd) = weights
    gate, up = F.linear(x, wg, bg), F.linear(x, wu, bu)
    act = ACTIVATIONS[variant.activation]
    if variant.gated == "gate-only":
        hidden = act(gate)
    elif variant.gated == "up-only":
        hidden = act(up)
    else:
        hidden = act(gate) * up if variant.on == "gate" else gate * act(up)
    return F.linear(hidden, wd, bd)


def forward(ctx: Context, module, x):
    out = ctx.call(module, x)
    out = out[0] if isinstance(out, (tuple, list)) and out else out
    return tensor_result(out)


def layout_check(ctx: Context):
    built = build(ctx)
    if built.names is None:
        return outcome("fail", Ev("unrecognised layout; accepted: {accepted}", accepted=ACCEPTED))
    with_bias = [n for n in built.names if getattr(built.module, n).bias is not None]
    if with_bias:
        if len(with_bias) == 1:
            return outcome("fail", Ev("{names} has a bias: SwiGLU as in LLaMA and PaLM is bias-free (bias=False)", names=with_bias[0]))
        return outcome("fail", Ev("{names} have biases: SwiGLU as in LLaMA and PaLM is bias-free (bias=False)", names=", ".join(with_bias)))
    gate, up, down = built.names
    return outcome("pass", Ev("gate {gate}, up {up}, down {down} (bias-free)", gate=gate, up=up, down=down))


def shape_check(ctx: Context, shape, non_contiguous):
    built = build(ctx)
    gen = ctx.generator(1)
    x = ctx.randn(shape[1], shape[0], shape[-1], gen=gen).transpose(0, 1) if non_contiguous else ctx.randn(*shape, gen=gen)
    out = forward(ctx, built.module, x)
    problem = expect_like(out, shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def numerical_check(ctx: Context, dtype, offset: int, shape=X, scale: float = 1.0):
    built = build(ctx, dtype)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = scale * ctx.randn(*shape, gen=ctx.generator(100 + offset), dtype=torch.float64)
    truth = reference(x.to(dtype).double(), built.weights(torch.float64))
    same = reference(x.to(dtype), built.weights(dtype))
    return against_truth([(Ev("output ({dtype})", dtype=str(dtype)[6:]), forward(ctx, built.module, x.to(dtype)), truth, same)])


def gradient_check(ctx: Context):
    built = build(ctx)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    gen = ctx.generator(200)
    x64 = ctx.randn(*X, gen=gen, dtype=torch.float64)
    seed_grad = ctx.randn(*X, gen=gen, dtype=torch.float64)
    x = x64.float().requires_grad_()
    out = forward(ctx, built.module, x)
    expect_shape(out, X)
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        leaf = x64.float().to(precision).requires_grad_()
        weights = [(w.clone().requires_grad_(), b) for w, b in built.weights(precision)]
        (reference(leaf, weights) * seed_grad.to(precision)).sum().backward()
        grads[precision] = [("x", leaf.grad)] + [(n, w.grad) for n, (w, _) in zip(built.names, weights)]
    user = [x.grad] + [getattr(built.module, n).weight.grad for n in built.names]
    pairs = []
    for got, (name, truth), (_, same) in zip(user, grads[torch.float64], grads[torch.float32]):
        if got is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached or unused?)", name=name))
        pairs.append((Ev("d{name}", name=name if name == "x" else name + ".weight"), got, truth, same))
    return against_truth(pairs)


def rows_check(ctx: Context):
    built = build(ctx, torch.float64)
    x = ctx.randn(*X, gen=ctx.generator(300), dtype=torch.float64)
    return row_independence_check(ctx, lambda z: forward(ctx, built.module, z), x)


def large_check(ctx: Context):
    """float32 pre-activations of a few hundred: SiLU through exp must not overflow to NaN."""
    built = build(ctx)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = 300 * ctx.randn(*X, gen=ctx.generator(400), dtype=torch.float64)
    truth = reference(x.float().double(), built.weights(torch.float64))
    same = reference(x.float(), built.weights(torch.float32))
    out = forward(ctx, built.module, x.float())
    bad = first_nonfinite(out, truth)
    if bad is not None:
        return outcome("fail", Ev("inputs of a few hundred (float32) give a non-finite output at {at}: "
                                  "x * exp(x) / (1 + exp(x)) overflows; use torch.sigmoid or F.silu", at=list(bad)))  # fmt: skip
    return against_truth([(Ev("inputs ~300 (float32)"), out, truth, same)])


@dataclass(frozen=True)
class Probe:
    built: Built
    x: torch.Tensor

    def user(self, ctx: Context):
        return forward(ctx, self.built.module, self.x.clone())

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct SwiGLU" here.
        variant = variant if isinstance(variant, SwiGLUVariant) else CORRECT_SWIGLU
        return reference(self.x, self.built.weights(torch.float64), variant)


HYPOTHESES = (
    ("swiglu-silu-on-up", SwiGLUVariant(on="up")),
    ("swiglu-wrong-activation", SwiGLUVariant(activation="gelu")),
    ("swiglu-wrong-activation", SwiGLUVariant(activation="gelu-tanh")),
    ("swiglu-wrong-activation", SwiGLUVariant(activation="relu")),
    ("swiglu-wrong-activation", SwiGLUVariant(activation="sigmoid")),
    ("swiglu-wrong-activation", SwiGLUVariant(activation="none")),
    ("swiglu-gate-missing", SwiGLUVariant(gated="gate-only")),
    ("swiglu-gate-missing", SwiGLUVariant(gated="up-only")),
)


class SwiGLUTask:
    name = "swiglu"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("load.layout", "rules", partial(layout_check, ctx)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, X, False)),
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (7, D_MODEL), False)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, (3, 1, D_MODEL), False)),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, X, True)),
        ]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, dtype, i)) for i in range(2)]
        x = ctx.randn(*X, gen=ctx.generator(600))

        def no_mutation():
            module = build(ctx).module
            return no_mutation_check(ctx, lambda: forward(ctx, module, x), {"x": x})

        def deterministic():
            module = build(ctx).module
            return deterministic_check(lambda: forward(ctx, module, x.clone()))

        return defs + [
            CheckDef("numerical.scale-3", "numerical", partial(numerical_check, ctx, torch.float32, 5, (3, 4, D_MODEL), 3.0)),
            CheckDef("numerical.drawn", "numerical",
                     partial(numerical_check, ctx, torch.float32, 9, (*ctx.sizes(300, (1, 5), (2, 12), avoid=(D_MODEL, D_FF)), D_MODEL))),  # fmt: skip
            CheckDef("gradient.x-and-weights", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.rows", "mask-leak", partial(rows_check, ctx)),
            CheckDef("stability.large-inputs", "stability", partial(large_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = build(ctx, torch.float64)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.names is None:
            return []
        x = 1.5 * ctx.randn(3, 4, D_MODEL, gen=ctx.generator(1100), dtype=torch.float64)
        return [Probe(built, x)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = SwiGLUTask()
