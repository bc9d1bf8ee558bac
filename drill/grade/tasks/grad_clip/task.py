"""The ``grad_clip`` task: ``clip_grad_norm(parameters, max_norm) -> total_norm``, in place.

The reference is torch's own ``clip_grad_norm_`` on copies (global L2 norm; every gradient
multiplied by ``min(1, max_norm / (total_norm + 1e-6))``). The parameters cross to the user side
as a ``$params`` recipe (drill.grade.user.wire.Params): nn.Parameters whose ``.grad`` is the
tensor the judge sent, so the clipped gradients come back as modified inputs, whether the code
scales them in place or assigns new ones. The 1e-6 changes a clipped gradient by a relative
1e-6 / total_norm only: the float64 check and a probe at total_norm ~1e-4 see it, and so does
an all-zero gradient, where dropping it gives 0 / 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.compare import against_truth
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.user.wire import Params
from drill.text.messages import Ev

SHAPES = ((3, 4), (5,), (2, 2, 2))
EPS = 1e-6
RETURNED_TOTAL = Ev("returned total_norm")

FORBIDDEN = {
    "clip_grad_norm_": "torch.nn.utils.clip_grad_norm_",
    "clip_grad_norm": "torch.nn.utils.clip_grad_norm",
    "clip_grads_with_norm_": "torch.nn.utils.clip_grads_with_norm_",
    "get_total_norm": "torch.nn.utils.get_total_norm",
}


@dataclass(frozen=True)
class ClipVariant:
    scope: str = "global"  # global (correct) | per-parameter: each grad clipped by its own norm
    when: str = "above"  # above (correct): only when total > max_norm | always: scaled up below it too
    eps: float = EPS  # 0.0: max_norm / total_norm


CORRECT_CLIP = ClipVariant()


def reference(grads, max_norm, variant: ClipVariant = CORRECT_CLIP):
    """(total_norm, clipped grads) of float tensors, computed in their dtype (None grads skipped)."""
    if variant == CORRECT_CLIP:
        params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads if g is not None]
        for p, g in zip(params, [g for g in grads if g is not None]):
            p.grad = g.clone()
        total = torch.nn.utils.clip_grad_norm_(params, max_norm)
        it = iter(params)
        return total, [None if g is None else next(it).grad for g in grads]

    def coef(norm):
        c = max_norm / (norm + variant.eps)
        return c if variant.when == "always" else torch.clamp(c, max=1.0)

    present = [g for g in grads if g is not None]
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in present]))
    if variant.scope == "per-parameter":
        return total, [None if g is None else g * coef(torch.linalg.vector_norm(g)) for g in grads]
    return total, [None if g is None else g * coef(total) for g in grads]


def make_grads(ctx: Context, offset: int, norm: float, shapes=SHAPES, dtype=torch.float64):
    """Random gradients whose global norm is ``norm`` (float64, then cast)."""
    gen = ctx.generator(offset)
    grads = [ctx.randn(*s, gen=gen, dtype=torch.float64) * (1 + i) for i, s in enumerate(shapes)]
    total = torch.sqrt(sum((g**2).sum() for g in grads))
    return [(g * (norm / total)).to(dtype) for g in grads]


def run(ctx: Context, grads, max_norm, values=None):
    """The user's total norm and the gradients as the user left them (copies of what came back)."""
    values = values or [torch.randn(g.shape, generator=ctx.generator(7), dtype=torch.float64).to(ctx.device, g.dtype) for g in grads]
    params = Params(tuple((v, None if g is None else g.clone()) for v, g in zip(values, grads)))
    total = ctx.call(ctx.entry, params, max_norm)
    if isinstance(total, torch.Tensor) and total.numel() == 1:
        total = total.reshape(())
    elif isinstance(total, (int, float)) and not isinstance(total, bool):
        total = torch.tensor(float(total), dtype=torch.float64)
    elif isinstance(total, torch.Tensor):
        raise WrongShape(Ev("returned a tensor of shape {shape}, not the total norm (a 0-dim tensor or a float)", shape=list(total.shape)))
    else:
        raise WrongShape(Ev("returned {type}, not the total norm (a 0-dim tensor or a float)", type=type(total).__name__))
    return total, [g for _, g in params.pairs]


def clip_check(ctx: Context, norm: float, max_norm: float, dtype, offset: int, shapes=SHAPES):
    grads = make_grads(ctx, offset, norm, shapes, dtype)
    truth_total, truth = reference([g.double() for g in grads], max_norm)  # float64, from the inputs the user got
    same_total, same = reference(grads, max_norm)
    total, clipped = run(ctx, grads, max_norm)
    pairs = [(RETURNED_TOTAL, total.to(dtype), truth_total, same_total)]
    pairs += [(Ev("parameter {i}'s clipped grad", i=i), c, t, s) for i, (c, t, s) in enumerate(zip(clipped, truth, same))]
    result = against_truth(pairs)
    what = Ev("total_norm {norm:g}, max_norm {max_norm:g}, {n} parameters, {dtype}", norm=norm, max_norm=max_norm, n=len(shapes),
              dtype=str(dtype)[6:])  # fmt: skip
    result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def drawn_check(ctx: Context):
    """Four to six parameters of drawn shapes (1-D to 3-D), a drawn total_norm above a drawn max_norm: a file
    right only at the fixed three parameters and norms fails here."""
    n, a, b, c = ctx.sizes(300, (4, 6), (2, 9), (2, 9), (2, 9))
    shapes = ((a, b), (c,), (b, a, c), (c, a), (b,), (a, c, b))[:n]
    u = torch.rand(2, generator=ctx.generator(301), dtype=torch.float64).tolist()
    norm, max_norm = round(2 + 18 * u[0], 2), round(0.1 + 1.4 * u[1], 2)
    result = clip_check(ctx, norm, max_norm, torch.float32, 302, shapes)
    grads = "+".join(str(list(s)) for s in shapes)
    result.message = Ev("{label}: {what}", label=Ev("grads={grads} (drawn from the seed)", grads=grads), what=result.message)
    return result


def below_check(ctx: Context):
    """Below max_norm the gradients must come back exactly as they went in."""
    grads = [g.float() for g in make_grads(ctx, 150, 0.5)]
    _, clipped = run(ctx, grads, 1.0)
    for i, (before, after) in enumerate(zip(grads, clipped)):
        if not torch.equal(before, after):
            ratio = (after.double() / before.double()).flatten()[0].item()
            return outcome("fail", Ev("total_norm 0.5 < max_norm 1: parameter {i}'s grad was changed (scaled by {ratio:.4g}); "
                                      "below max_norm nothing is clipped", i=i, ratio=ratio))  # fmt: skip
    return outcome("pass", Ev("total_norm 0.5 < max_norm 1: every grad unchanged, bit for bit"))


def zero_grads_check(ctx: Context):
    grads = [torch.zeros(s, device=ctx.device) for s in SHAPES]
    total, clipped = run(ctx, grads, 1.0)
    bad = [i for i, g in enumerate(clipped) if not torch.isfinite(g).all()]
    if bad or not torch.isfinite(total):
        where = Ev("parameter {i}'s grad", i=bad[0]) if bad else Ev("the returned total_norm")
        return outcome("fail", Ev("all-zero gradients: {where} is not finite (0 / 0: max_norm / (total_norm + 1e-6) needs the 1e-6)",
                                  where=where), "clip-no-epsilon")  # fmt: skip
    if total.item() != 0 or any(g.abs().max().item() != 0 for g in clipped):
        return outcome("fail", Ev("all-zero gradients: expected total_norm 0 and zero grads, got total_norm {total:.3g}", total=total.item()))
    return outcome("pass", Ev("all-zero gradients stay zero, total_norm 0"))


def none_grad_check(ctx: Context):
    """A parameter without a gradient (grad None) is skipped, as torch skips it."""
    grads64 = make_grads(ctx, 170, 4.0)
    grads = [g.float() for g in grads64]
    grads.insert(1, None)
    truth_total, truth = reference([None if g is None else g.double() for g in grads], 1.0)
    same_total, same = reference(grads, 1.0)
    values = [torch.zeros(2, 3, device=ctx.device) if g is None else torch.zeros_like(g) for g in grads]
    total, clipped = run(ctx, grads, 1.0, values)
    if clipped[1] is not None:
        return outcome("fail", Ev("a parameter whose grad was None came back with a gradient"))
    pairs = [(RETURNED_TOTAL, total.float(), truth_total, same_total)]
    pairs += [(Ev("parameter {i}'s clipped grad", i=i), c, t, s) for i, (c, t, s) in enumerate(zip(clipped, truth, same)) if t is not None]
    result = against_truth(pairs)
    result.message = Ev("{label}: {what}", label=Ev("a parameter with grad None in the list"), what=result.message)
    return result


def values_check(ctx: Context):
    """Clipping touches the gradients only: the parameters' values must come back unchanged."""
    grads = [g.float() for g in make_grads(ctx, 180, 3.0)]
    values = [torch.randn(g.shape, generator=ctx.generator(181)).to(ctx.device) for g in grads]
    before = [v.clone() for v in values]
    run(ctx, grads, 1.0, values)
    changed = [i for i, (v, b) in enumerate(zip(values, before)) if not torch.equal(v, b)]
    if changed:
        return outcome("fail", Ev("the values of parameter {i} changed: clip p.grad, never p (or p.data)", i=changed[0]), "mutates-input")
    return outcome("pass", Ev("the parameters' values unchanged"))


@dataclass(frozen=True)
class Probe:
    """float64 gradients; the probe's output is each element's scale factor, clipped / original."""

    grads: tuple
    max_norm: float

    def user(self, ctx: Context):
        _, clipped = run(ctx, list(self.grads), self.max_norm)
        return torch.cat([(c / g).flatten() for c, g in zip(clipped, self.grads)])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct clipping" here.
        variant = variant if isinstance(variant, ClipVariant) else CORRECT_CLIP
        _, clipped = reference(list(self.grads), self.max_norm, variant)
        return torch.cat([(c / g).flatten() for c, g in zip(clipped, self.grads)])


HYPOTHESES = (
    ("clip-per-parameter", ClipVariant(scope="per-parameter")),
    ("clip-per-parameter", ClipVariant(scope="per-parameter", eps=0.0)),
    ("clip-when-below", ClipVariant(when="always")),
    ("clip-when-below", ClipVariant(when="always", eps=0.0)),
    ("clip-no-epsilon", ClipVariant(eps=0.0)),
)


class GradClipTask:
    name = "grad_clip"
    forbidden = FORBIDDEN
    builtin_what = Ev("gradient clipping")
    builtin_code = "uses-builtin-clip-grad"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("shape.returns-norm", "shape", partial(clip_check, ctx, 2.0, 1.0, torch.float32, 0, ((6,),))),
            CheckDef("numerical.clipped", "numerical", partial(clip_check, ctx, 5.0, 1.0, torch.float32, 1)),
            CheckDef("numerical.clipped-max-0.25", "numerical", partial(clip_check, ctx, 3.0, 0.25, torch.float32, 2)),
            CheckDef("numerical.one-parameter", "numerical", partial(clip_check, ctx, 7.0, 2.0, torch.float32, 3, ((4, 3),))),
            CheckDef("numerical.below-max-norm", "numerical", partial(below_check, ctx)),
            CheckDef("numerical.float64", "numerical", partial(clip_check, ctx, 5.0, 1.0, torch.float64, 4)),
            CheckDef("numerical.tiny-norm", "numerical", partial(clip_check, ctx, 1e-4, 5e-5, torch.float64, 5)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(clip_check, ctx, 5.0, 1.0, dt, 6))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("stability.zero-grads", "stability", partial(zero_grads_check, ctx)),
            CheckDef("stability.large-norm", "stability", partial(clip_check, ctx, 1e4, 1.0, torch.float32, 7)),
            CheckDef("robustness.none-grad", "robustness", partial(none_grad_check, ctx)),
            CheckDef("robustness.values-unchanged", "robustness", partial(values_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [
            Probe(tuple(make_grads(ctx, 1100, 5.0)), 1.0),
            Probe(tuple(make_grads(ctx, 1101, 0.5)), 1.0),
            Probe(tuple(make_grads(ctx, 1102, 1e-4)), 5e-5),
        ]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = GradClipTask()
