"""The ``lora`` task: ``class LoRALinear(nn.Module)``, ``__init__(base: nn.Linear, r, alpha)``, ``forward(x)``, ``merged()``.

LoRA (Hu et al. 2021, as in peft): ``base(x) + (alpha / r)·B(A(x))`` with A ``[r, in]`` random, B
``[out, r]`` zero, the base frozen. The judge builds the base layer's weights and hands them over as
the wire's ``$linear`` recipe (an nn.Linear built on the user side); it reads A from the module's
shadow and, since a zero B hides the whole low-rank path, overwrites B with its own values
(``UserProcess.assign``) before every check that needs it. ``merged()`` comes back as a handle, and
``UserProcess.describe`` gives its weight and bias. Frozen means no gradient reaches the base: the
user side's vector-Jacobian product leaves a parameter that does not require grad without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial, reduce

import torch
import torch.nn.functional as F
from torch import nn

from drill.grade.checks.common import deterministic_check, dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, expect_shape
from drill.grade.checks.rows import row_independence_check, tensor_result
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.layouts import is_linear
from drill.grade.remote import UserCodeError
from drill.grade.user.wire import Handle, Linear
from drill.text.messages import Ev

IN, OUT, R, ALPHA = 6, 5, 2, 8.0  # scale alpha / r = 4, alpha alone 8
X = (2, 3, IN)
NAMES = (("A", "B"), ("lora_A", "lora_B"))
NO_LAYOUT = Ev("skipped: no reference without A and B (or lora_A and lora_B) and the base layer")


@dataclass(frozen=True)
class LoRAVariant:
    scale: str = "alpha/r"  # alpha/r (correct) | alpha: in forward
    merged_scale: str = "alpha/r"  # the same in merged()
    transposed: bool = False  # merged weight W + s (B A)^T


CORRECT_LORA = LoRAVariant()


def scaling(how: str, r: int, alpha: float) -> float:
    return alpha / r if how == "alpha/r" else alpha


@dataclass
class Built:
    module: object
    names: tuple[str, str, str] | None  # (A's weight, B's weight, base): "lora_A.weight", or loralib's parameter "lora_A"
    weight: torch.Tensor  # the base weight and bias the judge handed over (float64)
    bias: torch.Tensor | None
    r: int
    alpha: float

    def params(self, dtype):
        """(W, b, A, B) in ``dtype``: the judge's base, the module's current A and B."""
        a, b, _ = self.names
        return (self.weight.to(dtype), None if self.bias is None else self.bias.to(dtype),
                tensor_at(self.module, a).detach().to(dtype), tensor_at(self.module, b).detach().to(dtype))  # fmt: skip


def both(names: list[str]) -> Ev:
    """``a and b``: code names as each language joins them."""
    return reduce(lambda a, b: Ev("{a} and {b}", a=a, b=Ev("{code}", code=b)), names[1:], Ev("{code}", code=names[0]))


def tensor_at(module, path: str):
    """The parameter at a dotted path: ``lora_A.weight`` (an nn.Linear) or ``lora_A`` (loralib's nn.Parameter)."""
    return reduce(getattr, path.split("."), module)


def adapter_paths(module, a: str, b: str, in_: int, out: int, r: int) -> tuple[str, str] | None:
    """A and B as bias-free nn.Linear(in, r) and nn.Linear(r, out), or as loralib's parameters [r, in] and [out, r]."""
    if is_linear(getattr(module, a, None), in_, r) and is_linear(getattr(module, b, None), r, out):
        return f"{a}.weight", f"{b}.weight"
    pa, pb = (getattr(module, n, None) for n in (a, b))
    if isinstance(pa, nn.Parameter) and isinstance(pb, nn.Parameter) and pa.shape == (r, in_) and pb.shape == (out, r):
        return a, b
    return None


def find_names(module, weight, r: int):
    out, in_ = weight.shape
    for a, b in NAMES:
        paths = adapter_paths(module, a, b, in_, out, r)
        if paths:
            for name, sub in module.named_children():
                if name not in (a, b) and is_linear(sub, in_, out) and torch.equal(sub.weight.detach().double(), weight):
                    return *paths, name
    return None


def build(ctx: Context, dtype=torch.float32, shape=(OUT, IN), r: int = R, alpha: float = ALPHA, bias: bool = True,
          offset: int = 0, set_b: bool = True) -> Built:  # fmt: skip
    """The user's LoRALinear around the judge's base layer (values exact in ``dtype``); with ``set_b`` B is
    overwritten by the judge's random values, so the low-rank path shows in every output."""
    gen = ctx.generator(900 + offset)
    w = (0.5 * ctx.randn(*shape, gen=gen, dtype=torch.float64)).to(dtype).double()
    b = (0.5 * ctx.randn(shape[0], gen=gen, dtype=torch.float64)).to(dtype).double() if bias else None
    module = ctx.instantiate((Linear(w.to(dtype), None if b is None else b.to(dtype)), r, alpha), dtype)
    built = Built(module, find_names(module, w, r), w, b, r, alpha)
    if set_b and built.names is not None:
        value = (0.5 * ctx.randn(shape[0], r, gen=gen, dtype=torch.float64)).to(dtype)
        ctx.user.assign(module, {built.names[1]: value})
    return built


def reference(x, params, r: int, alpha: float, variant: LoRAVariant = CORRECT_LORA):
    w, b, a, bb = params
    return F.linear(x, w, b) + scaling(variant.scale, r, alpha) * (x @ a.T @ bb.T)


def merged_reference(params, r: int, alpha: float, variant: LoRAVariant = CORRECT_LORA):
    w, _, a, bb = params
    delta = bb @ a
    return w + scaling(variant.merged_scale, r, alpha) * (delta.T if variant.transposed else delta)


def forward(ctx: Context, module, x):
    out = ctx.call(module, x)
    return tensor_result(out[0] if isinstance(out, (tuple, list)) and out else out)


def merged(ctx: Context, built: Built):
    """The user's merged() as a shadow nn.Module (weight, bias), or WrongShape naming what came back."""
    method = ctx.user.attribute(built.module, "merged")
    if not isinstance(method, Handle):
        raise UserCodeError(Ev("LoRALinear has no merged() method"), "not-implemented")
    layer = ctx.call(method)
    if not isinstance(layer, Handle):
        raise WrongShape(Ev("merged() returned {type}, not an nn.Linear", type=type(layer).__name__))
    shadow = ctx.user.describe(layer)
    if shadow.class_name != "Linear" or not isinstance(getattr(shadow, "weight", None), torch.Tensor):
        raise WrongShape(Ev("merged() returned a {type}, not an nn.Linear", type=shadow.class_name))
    return shadow


def layout_check(ctx: Context):
    built = build(ctx, set_b=False)
    if built.names is None:
        return outcome("fail", Ev("unrecognised layout: expected the base nn.Linear({n_in}, {n_out}) as given and, beside it, "
                                  "A = nn.Linear({n_in}, r, bias=False) and B = nn.Linear(r, {n_out}, bias=False) (or lora_A, lora_B), "
                                  "or loralib's lora_A = nn.Parameter [r, {n_in}] and lora_B = nn.Parameter [{n_out}, r]",
                                  n_in=IN, n_out=OUT))  # fmt: skip
    a, b, base = (n.removesuffix(".weight") for n in built.names)
    with_bias = [n for n in (a, b) if getattr(getattr(built.module, n), "bias", None) is not None]
    if with_bias:
        if len(with_bias) == 1:
            return outcome("fail", Ev("{name} has a bias: LoRA's A and B are bias-free (the base keeps its own)", name=with_bias[0]))
        return outcome("fail", Ev("{names} have biases: LoRA's A and B are bias-free (the base keeps its own)", names=both(with_bias)))
    return outcome("pass", Ev("base {base}, A {a} [{r}, {n_in}], B {b} [{n_out}, {r}]", base=base, a=a, b=b, r=R, n_in=IN, n_out=OUT))


def init_check(ctx: Context):
    """At init B is zero, so the layer is exactly its base (float64); A is random, or no gradient ever flows."""
    built = build(ctx, torch.float64, set_b=False)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = ctx.randn(*X, gen=ctx.generator(10), dtype=torch.float64)
    out = forward(ctx, built.module, x)
    expect_shape(out, (*X[:-1], OUT))
    base = F.linear(x, built.weight, built.bias)
    change = (out.detach() - base).abs().max().item()
    b_weight = tensor_at(built.module, built.names[1])
    if change > 1e-12 or b_weight.abs().max().item() != 0:
        return outcome("fail", Ev("at init the output differs from base(x) by {change:.3g} (B's largest |weight| is {largest:.3g}): "
                                  "B must start at zero, so the adapter starts as the pretrained layer",
                                  change=change, largest=b_weight.abs().max().item()), "lora-b-not-zero")  # fmt: skip
    if tensor_at(built.module, built.names[0]).abs().max().item() == 0:
        return outcome("fail", Ev("A is all zeros as well as B: then neither gets a gradient and the adapter never trains; "
                                  "initialise A randomly (peft: kaiming_uniform_(a=sqrt(5)))"))  # fmt: skip
    return outcome("pass", Ev("at init the output is base(x) exactly (B = 0), A random (float64)"))


def shape_check(ctx: Context, shape, r: int = R, non_contiguous: bool = False):
    built = build(ctx, r=r)
    gen = ctx.generator(1)
    x = ctx.randn(shape[1], shape[0], shape[-1], gen=gen).transpose(0, 1) if non_contiguous else ctx.randn(*shape, gen=gen)
    out = forward(ctx, built.module, x)
    problem = expect_like(out, (*shape[:-1], OUT), x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("r = {r}: output {shape}", r=r, shape=list(out.shape)))


def numerical_check(ctx: Context, dtype, offset: int, r: int = R, alpha: float = ALPHA, bias: bool = True, shape=(OUT, IN),
                    lead=X[:-1]):  # fmt: skip
    built = build(ctx, dtype, shape, r, alpha, bias, offset)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = ctx.randn(*lead, shape[1], gen=ctx.generator(100 + offset), dtype=torch.float64).to(dtype)
    truth = reference(x.double(), built.params(torch.float64), r, alpha)
    same = reference(x, built.params(dtype), r, alpha)
    if bias:
        what = Ev("r={r}, alpha={alpha:g}, {dtype}", r=r, alpha=alpha, dtype=str(dtype)[6:])
    else:
        what = Ev("r={r}, alpha={alpha:g}, base without bias, {dtype}", r=r, alpha=alpha, dtype=str(dtype)[6:])
    result = against_truth([(Ev("output ({what})", what=what), forward(ctx, built.module, x), truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def merged_check(ctx: Context, bias: bool = True, shape=(OUT, IN), r: int = R, alpha: float = ALPHA, offset: int = 20):
    built = build(ctx, torch.float32, shape, r, alpha, bias, offset)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    layer = merged(ctx, built)
    out, in_ = shape
    if layer.weight.shape == (in_, out) and in_ != out:
        return outcome("fail", Ev("the merged weight has shape [{n_in}, {n_out}], nn.Linear's is [out, in] = [{n_out}, {n_in}]: "
                                  "W + (alpha / r) * B.weight @ A.weight, not its transpose", n_in=in_, n_out=out),
                       "lora-merged-transposed")  # fmt: skip
    pairs = [(Ev("merged weight"), layer.weight, merged_reference(built.params(torch.float64), r, alpha),
              merged_reference(built.params(torch.float32), r, alpha))]  # fmt: skip
    got_bias = getattr(layer, "bias", None)
    if bias:
        if got_bias is None:
            return outcome("fail", Ev("the merged layer has no bias: it keeps the base layer's"))
        pairs.append((Ev("merged bias"), got_bias, built.bias, built.bias.float()))
    elif got_bias is not None:
        return outcome("fail", Ev("the merged layer has a bias although the base has none"))
    result = against_truth(pairs)
    if result.status == "pass":
        where = (Ev("with a base bias, [{n_out}, {n_in}]", n_out=out, n_in=in_) if bias else
                 Ev("without a base bias, [{n_out}, {n_in}]", n_out=out, n_in=in_))  # fmt: skip
        result.message = Ev("{label}: {what}", label=where, what=result.message)
    return result


def drawn(ctx: Context):
    """[out, in], r, alpha and the batch dims drawn from the seed (alpha / r never the fixed checks' 4)."""
    out, in_, r, b, t = ctx.sizes(300, (3, 12), (3, 12), (1, 6), (1, 4), (2, 7))
    (alpha,) = ctx.sizes(301, (1, 32), avoid=(4 * r,))
    return (out, in_), r, float(alpha), (b, t)


def drawn_check(ctx: Context, merge: bool):
    shape, r, alpha, lead = drawn(ctx)
    if merge:
        result = merged_check(ctx, True, shape, r, alpha, 23)
        where = Ev("out={n_out}, in={n_in}, r={r}, alpha={alpha:g} (drawn from the seed)", n_out=shape[0], n_in=shape[1], r=r,
                   alpha=alpha)  # fmt: skip
    else:
        result = numerical_check(ctx, torch.float32, 5, r, alpha, True, shape, lead)
        where = Ev("x={x}, out={n_out}, in={n_in} (drawn from the seed)", x=[*lead, shape[1]], n_out=shape[0], n_in=shape[1])
    result.message = Ev("{label}: {what}", label=where, what=result.message)
    return result


def gradient_check(ctx: Context):
    """d out / d x, A and B against the reference; and no gradient at all for the frozen base."""
    built = build(ctx, offset=30)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    a_name, b_name, base = built.names
    gen = ctx.generator(200)
    x64 = ctx.randn(*X, gen=gen, dtype=torch.float64)
    seed_grad = ctx.randn(*X[:-1], OUT, gen=gen, dtype=torch.float64)
    x = x64.float().requires_grad_()
    out = forward(ctx, built.module, x)
    expect_shape(out, (*X[:-1], OUT))
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    module = built.module
    leaking = [f"{base}.{n}" for n, p in getattr(module, base).named_parameters() if p.grad is not None]
    if leaking:
        return outcome("fail", Ev("{names} received a gradient: the base layer must be frozen (requires_grad_(False) on its weight "
                                  "and bias), only A and B train", names=both(leaking)), "lora-base-not-frozen")  # fmt: skip
    grads = {}
    for precision in (torch.float64, torch.float32):
        w, b, a, bb = built.params(precision)
        leaf, a, bb = (t.detach().clone().to(precision).requires_grad_() for t in (x64, a, bb))
        (reference(leaf, (w, b, a, bb), built.r, built.alpha) * seed_grad.to(precision)).sum().backward()
        grads[precision] = (leaf.grad, a.grad, bb.grad)
    user = (x.grad, tensor_at(module, a_name).grad, tensor_at(module, b_name).grad)
    pairs = []
    for name, got, truth, same in zip(("dx", f"d{a_name}", f"d{b_name}"), user, grads[torch.float64], grads[torch.float32]):
        if got is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it frozen or detached?)", name=name[1:]))
        pairs.append((name, got, truth, same))
    result = against_truth(pairs)
    if result.status == "pass":
        result.message = Ev.seq([Ev("base frozen (no gradient)"), result.message])
    return result


def rows_check(ctx: Context):
    built = build(ctx, torch.float64, (IN, IN), offset=40)
    x = ctx.randn(*X, gen=ctx.generator(300), dtype=torch.float64)
    return row_independence_check(ctx, lambda z: forward(ctx, built.module, z), x)


def large_check(ctx: Context):
    built = build(ctx, offset=50)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = 1e3 * ctx.randn(*X, gen=ctx.generator(400), dtype=torch.float64)
    truth = reference(x.float().double(), built.params(torch.float64), R, ALPHA)
    same = reference(x.float(), built.params(torch.float32), R, ALPHA)
    return against_truth([(Ev("inputs ~1e3 (float32)"), forward(ctx, built.module, x.float()), truth, same)])


def merge_keeps_base_check(ctx: Context):
    """merged() returns a new layer: the adapter's own base weight and its forward pass stay as they were."""
    built = build(ctx, offset=60)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = ctx.randn(*X, gen=ctx.generator(500))
    before = forward(ctx, built.module, x)
    merged(ctx, built)
    weight = ctx.user.attribute(built.module, f"{built.names[2]}.weight")
    after = forward(ctx, built.module, x)
    if isinstance(weight, torch.Tensor) and not torch.equal(weight.double(), built.weight):
        return outcome("fail", Ev("merged() changed the base layer's weight in place (max change {change:.3g}): the adapter's forward "
                                  "now adds B A twice; build a new nn.Linear", change=(weight.double() - built.weight).abs().max().item()),
                       "lora-merge-mutates-base")  # fmt: skip
    if not torch.equal(before, after):
        return outcome("fail", Ev("the forward pass changed after merged(): merging must leave the adapter as it was"),
                       "lora-merge-mutates-base")  # fmt: skip
    return outcome("pass", Ev("after merged(), the base weight and the forward pass are unchanged"))


@dataclass(frozen=True)
class Probe:
    built: Built
    x: torch.Tensor | None  # None: the merged weight

    def user(self, ctx: Context):
        if self.x is None:
            return merged(ctx, self.built).weight.detach().double()
        return forward(ctx, self.built.module, self.x.clone())

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct LoRA layer" here.
        variant = variant if isinstance(variant, LoRAVariant) else CORRECT_LORA
        params = self.built.params(torch.float64)
        if self.x is None:
            return merged_reference(params, self.built.r, self.built.alpha, variant)
        return reference(self.x, params, self.built.r, self.built.alpha, variant)


HYPOTHESES = (
    ("lora-scale-alpha", LoRAVariant(scale="alpha", merged_scale="alpha")),
    ("lora-scale-alpha", LoRAVariant(scale="alpha")),
    ("lora-merged-transposed", LoRAVariant(transposed=True)),
    ("lora-merged-transposed", LoRAVariant(scale="alpha", merged_scale="alpha", transposed=True)),
)


class LoRATask:
    name = "lora"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("load.layout", "rules", partial(layout_check, ctx)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, X)),
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (7, IN))),
            CheckDef("shape.r-1", "shape", partial(shape_check, ctx, X, 1)),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, X, R, True)),
            CheckDef("numerical.init-is-base", "numerical", partial(init_check, ctx)),
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
            CheckDef("numerical.r4-alpha16", "numerical", partial(numerical_check, ctx, torch.float32, 2, 4, 16.0)),
            CheckDef("numerical.no-bias", "numerical", partial(numerical_check, ctx, torch.float32, 3, bias=False)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, torch.float64, 4)),
            CheckDef("numerical.merged", "numerical", partial(merged_check, ctx)),
            CheckDef("numerical.merged-no-bias", "numerical", partial(merged_check, ctx, False, offset=21)),
            CheckDef("numerical.merged-r4-alpha16", "numerical", partial(merged_check, ctx, True, (7, 3), 4, 16.0, 22)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx, False)),
            CheckDef("numerical.merged-drawn", "numerical", partial(drawn_check, ctx, True)),
            CheckDef("gradient.frozen-base", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.rows", "mask-leak", partial(rows_check, ctx)),
            CheckDef("stability.large-inputs", "stability", partial(large_check, ctx)),
            CheckDef("robustness.merge-keeps-base", "robustness", partial(merge_keeps_base_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = build(ctx, torch.float64, (IN, IN), offset=70)  # square: a transposed merge keeps its shape
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.names is None:
            return []
        return [Probe(built, 1.5 * ctx.randn(3, 4, IN, gen=ctx.generator(1100), dtype=torch.float64)), Probe(built, None)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = LoRATask()
