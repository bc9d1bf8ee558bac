"""The ``attention_backward`` task: ``attention_backward(q, k, v, d_out, mask=None) -> (dq, dk, dv)``, by hand.

The truth is float64 autograd through the reference attention, run here in the judge; the
user's file may not use autograd at all (Tensor.backward, torch.autograd.grad, torch.func and
forward-mode AD are refused at run time, with torch's own attention). :func:`backward_reference`
writes the backward out by hand with a knob for each classic mistake, for the diagnosis.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.common import deterministic_check, dtype_id, no_mutation_check, padding_mask, random_mask
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, first_nonfinite
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.reference import CORRECT, Variant, attention, causal_mask, scale_factor
from drill.text.messages import Ev

# Sizes: B, H, Tq, Tk, D, Dv never coincide, so a wrong transpose cannot hide.
Q, K, V, MASK = (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), (2, 1, 5, 7)
SHAPE_CASES = (
    ("shape.4d", Q, K, V, None),
    ("shape.3d", (3, 6, 4), (3, 6, 4), (3, 6, 5), None),
    ("shape.cross", Q, K, V, MASK),
    ("shape.t1", (2, 3, 1, 4), (2, 3, 1, 4), (2, 3, 1, 6), None),
    ("shape.mask-2d", Q, K, V, (5, 7)),
)
FORBIDDEN = {  # __name__ of the torch function or aten op: how the rule names it
    "backward": Ev("autograd (Tensor.backward or torch.autograd.backward)"),  # the rule shows it (battery.rules_check)
    "grad": Ev("autograd (torch.autograd.grad; torch.func.grad, vjp and jacrev call it)"),  # the rule shows it (battery.rules_check)
    "_make_dual": Ev("forward-mode autograd (torch.func.jvp, jacfwd, torch.autograd.forward_ad)"),  # the rule shows it (battery.rules_check)
}


@dataclass(frozen=True)
class BackwardVariant:
    """A mistake of the hand-written backward on top of a forward mistake (``base``)."""

    base: Variant = CORRECT
    jacobian: str = "full"  # | no-rowsum: dS = P * dP | diagonal: dS = P (1 - P) * dP
    unscaled: str = ""  # "dq", "dk" or "both": the 1/sqrt(D) missing in that gradient (the forward scaled)
    transposed: str = ""  # "dk": dk = dS q (no transpose) | "dv": dv = P dO
    remask: bool = True  # False: P recomputed from the unmasked scores
    form: str = "textbook"  # | flash: FlashAttention's forms, P = exp(S - logsumexp(S)) and D = rowsum(dO * O)
    #                     (the same in exact arithmetic; only the same-precision baseline uses them)


def backward_reference(q, k, v, d_out, mask=None, variant=CORRECT):
    """(dq, dk, dv) written out: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)), dQ = dS K c, dK = dS^T Q c."""
    variant = variant if isinstance(variant, BackwardVariant) else BackwardVariant(base=variant)
    c = scale_factor(variant.base, q.shape[-1], None)
    scores = q @ k.transpose(-2, -1) * c
    if mask is not None and variant.remask:
        scores = scores.masked_fill(~mask, float("-inf"))
    p = torch.exp(scores - scores.logsumexp(dim=-1, keepdim=True)) if variant.form == "flash" else torch.softmax(scores, dim=-1)
    dv = p @ d_out if variant.transposed == "dv" else p.transpose(-2, -1) @ d_out
    dp = d_out @ v.transpose(-2, -1)
    if variant.jacobian == "full":
        rows = (d_out * (p @ v) if variant.form == "flash" else dp * p).sum(dim=-1, keepdim=True)
        ds = p * (dp - rows)
    else:
        ds = p * dp if variant.jacobian == "no-rowsum" else p * (1 - p) * dp
    dq = ds @ k * (1.0 if variant.unscaled in ("dq", "both") else c)
    dk = (ds if variant.transposed == "dk" else ds.transpose(-2, -1)) @ q * (1.0 if variant.unscaled in ("dk", "both") else c)
    return dq, dk, dv


def autograd_truth(q, k, v, d_out, mask, dtype):
    """(dq, dk, dv) by autograd through the reference forward, in ``dtype``: the backward of sum(out * d_out)
    hands out exactly d_out, and unlike ``grad_outputs`` it imports no sympy (about 0.6 s)."""
    leaves = [t.detach().to(dtype).requires_grad_() for t in (q, k, v)]
    out, _ = attention(*leaves, mask)
    return torch.autograd.grad((out * d_out.to(dtype)).sum(), leaves)


def baseline(q, k, v, d_out, mask, dtype):
    """What the same computation achieves in ``dtype``, per gradient: the least accurate of autograd and
    the written-out backward (textbook or FlashAttention's forms), all run in ``dtype``."""
    exact = autograd_truth(q, k, v, d_out, mask, torch.float64)
    low = [t.to(dtype) for t in (q, k, v, d_out)]
    runs = (autograd_truth(q, k, v, d_out, mask, dtype), backward_reference(*low, mask),
            backward_reference(*low, mask, BackwardVariant(form="flash")))  # fmt: skip
    return tuple(max((r[i] for r in runs), key=lambda g: (g.double() - exact[i]).abs().max().item()) for i in range(3))


def run(ctx: Context, q, k, v, d_out, mask=None):
    """The user's (dq, dk, dv), each checked against its input's shape."""
    args = (q, k, v, d_out) if mask is None else (q, k, v, d_out, mask)
    ret = ctx.call(ctx.entry, *args)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 3 and all(isinstance(t, torch.Tensor) for t in ret)):
        raise WrongShape(Ev("returned {type}, not a tuple (dq, dk, dv) of three tensors", type=type(ret).__name__))
    for name, grad, like in zip(("dq", "dk", "dv"), ret, (q, k, v)):
        expect_shape(grad, like.shape, name)
    return tuple(ret)


def inputs(ctx: Context, shapes, offset: int, dtype=torch.float64):
    """q, k, v and d_out [..., Tq, Dv] for (q, k, v) shapes."""
    gen = ctx.generator(offset)
    q, k, v = (ctx.randn(*s, gen=gen, dtype=dtype) for s in shapes)
    return q, k, v, ctx.randn(*q.shape[:-1], v.shape[-1], gen=gen, dtype=dtype)


def shape_check(ctx: Context, qs, ks, vs, ms):
    q, k, v, d_out = inputs(ctx, (qs, ks, vs), 1, torch.float32)
    mask = random_mask(ms, ctx.generator(2), ctx.device) if ms else None
    for name, grad, like in zip(("dq", "dk", "dv"), run(ctx, q, k, v, d_out, mask), (q, k, v)):
        problem = expect_like(grad, like.shape, like, name)
        if problem:
            return outcome("fail", problem)
    if ms:
        return outcome("pass", Ev("dq {q}, dk {k}, dv {v} (mask {mask})", q=list(qs), k=list(ks), v=list(vs), mask=list(ms)))
    return outcome("pass", Ev("dq {q}, dk {k}, dv {v}", q=list(qs), k=list(ks), v=list(vs)))


def drawn_shapes(ctx: Context, offset: int):
    """(q, k, v, mask) shapes drawn from the grade's seed: B, H, Tq, Tk, D and Dv all differ (a file built for D=4,
    every fixed case's head dim, fails here)."""
    b, h, tq, tk, d, dv = ctx.sizes(300 + offset, (1, 4), (1, 6), (1, 12), (2, 12), (2, 16), (2, 16), avoid=(Q[-1],))
    where = Ev("B={b}, H={h}, Tq={tq}, Tk={tk}, D={d}, Dv={dv}, drawn from the seed", b=b, h=h, tq=tq, tk=tk, d=d, dv=dv)
    return ((b, h, tq, d), (b, h, tk, d), (b, h, tk, dv), (b, 1, tq, tk)), where


def numerical_check(ctx: Context, dtype, offset: int):
    """The fixed shapes, then shapes drawn from the seed; each without a mask and with a random one."""
    pairs = []
    for n, ((qs, ks, vs, ms), where) in enumerate((((Q, K, V, MASK), None), drawn_shapes(ctx, offset))):
        q, k, v, d_out = inputs(ctx, (qs, ks, vs), 100 + 20 * n + offset)
        for mask in (None, random_mask(ms, ctx.generator(150 + 20 * n + offset), ctx.device)):
            grads = run(ctx, *(t.to(dtype) for t in (q, k, v, d_out)), mask)
            truth, same = autograd_truth(q, k, v, d_out, mask, torch.float64), baseline(q, k, v, d_out, mask, dtype)
            parts = list(filter(None, (mask is not None and Ev("masked"), where)))
            names = (Ev("{grad} ({label})", grad=name, label=Ev.seq(parts, ", ")) if parts else name for name in ("dq", "dk", "dv"))
            pairs += list(zip(names, grads, truth, same))
    return against_truth(pairs)


def finite_difference_check(ctx: Context):
    """float64: <dq, a> + <dk, b> + <dv, c> must be the derivative of <out, d_out> along (a, b, c)."""
    q, k, v, d_out = inputs(ctx, (Q, K, V), 200)
    mask = random_mask(MASK, ctx.generator(201), ctx.device)
    gen = ctx.generator(202)
    direction = [ctx.randn(*t.shape, gen=gen, dtype=torch.float64) for t in (q, k, v)]
    grads = run(ctx, q, k, v, d_out, mask)
    claimed = sum((g * d).sum() for g, d in zip(grads, direction)).item()
    eps = 1e-5

    def loss(sign):
        moved_inputs = [t + sign * eps * d for t, d in zip((q, k, v), direction)]
        return (attention(*moved_inputs, mask)[0] * d_out).sum().item()

    measured = (loss(1) - loss(-1)) / (2 * eps)
    allowed = 1e-6 * max(1.0, abs(measured))
    if not abs(claimed - measured) <= allowed:
        return outcome("fail", Ev("along a random direction your gradients predict a change of {claimed:.6g}, "
                                  "the loss changes by {measured:.6g} (central difference, float64, masked)",
                                  claimed=claimed, measured=measured))  # fmt: skip
    return outcome("pass", Ev("directional derivative {claimed:.6g} = central difference {measured:.6g} (float64, masked)",
                              claimed=claimed, measured=measured))  # fmt: skip


def padding_leak_check(ctx: Context):
    """Keys no query may attend get exactly zero dk and dv, and moving them leaves dq unchanged."""
    lengths = (7, 1, 4)
    q, k, v, d_out = inputs(ctx, ((3, 2, 5, 4), (3, 2, 7, 4), (3, 2, 7, 6)), 300)
    mask = padding_mask(lengths, 7, ctx.device)
    dq, dk, dv = run(ctx, q, k, v, d_out, mask)
    gen = ctx.generator(301)
    for b, n in enumerate(lengths):
        for j in range(n, 7):
            for name, grad in (("dk", dk), ("dv", dv)):
                size = grad[b, :, j].abs().max().item()
                if not size == 0:
                    return outcome("fail", Ev("sample {b} (length {n}): {name} of padded key {j} is {size:.3g}, not 0",
                                              b=b, n=n, name=name, j=j, size=size))  # fmt: skip
            k2, v2 = k.clone(), v.clone()
            k2[b, :, j] += 10 * ctx.randn(4, gen=gen, dtype=torch.float64)
            v2[b, :, j] += 10 * ctx.randn(6, gen=gen, dtype=torch.float64)
            change = (run(ctx, q, k2, v2, d_out, mask)[0][b] - dq[b]).abs().max().item()
            if change > LEAK_THRESHOLD:
                return outcome("fail", Ev("sample {b} (length {n}): dq moves by {change:.3g} when padded key {j} changes",
                                          b=b, n=n, change=change, j=j))  # fmt: skip
    return outcome("pass", Ev("padded keys (lengths 7, 1, 4) get dk = dv = 0 and never move dq"))


def causal_leak_check(ctx: Context):
    """Causal: d_out[i] may reach dq[i] only, and dk[j], dv[j] only for j <= i."""
    q, k, v, d_out = inputs(ctx, ((2, 6, 4), (2, 6, 4), (2, 6, 5)), 400)
    mask = causal_mask(6, device=ctx.device)
    base = run(ctx, q, k, v, d_out, mask)
    for i in range(6):
        d2 = d_out.clone()
        d2[:, i] += 10.0
        grads = run(ctx, q, k, v, d2, mask)
        for name, new, old in zip(("dq", "dk", "dv"), grads, base):
            change = (new - old).abs().amax(dim=(0, 2))  # per position
            for j in range(6):
                if (j != i if name == "dq" else j > i) and change[j] > LEAK_THRESHOLD:
                    if name == "dq":
                        return outcome("fail", Ev("causal mask: {name}[{j}] moves when d_out[{i}] changes (moved {by:.3g}); "
                                                  "only dq[i] may", name=name, j=j, i=i, by=change[j].item()))  # fmt: skip
                    return outcome("fail", Ev("causal mask: {name}[{j}] moves when d_out[{i}] changes (moved {by:.3g}); "
                                              "only keys j <= {i} may", name=name, j=j, i=i, by=change[j].item()))  # fmt: skip
    return outcome("pass", Ev("causal mask: d_out[i] reaches dq[i] and dk[j], dv[j] for j <= i only"))


def large_logits_check(ctx: Context):
    q, k, v, d_out = inputs(ctx, (Q, K, V), 600)
    q, k = 31.6 * q, 31.6 * k
    grads = run(ctx, q, k, v, d_out)
    truth = autograd_truth(q, k, v, d_out, None, torch.float64)
    worst = 0.0
    for name, grad, exact in zip(("dq", "dk", "dv"), grads, truth):
        bad = first_nonfinite(grad, exact)
        if bad is not None:
            return outcome("fail", Ev("logits ~1e3 give a non-finite {name} at {at}", name=name, at=list(bad)), "unstable-softmax")
        error = (grad - exact).abs().max().item()
        if error > 1e-6 * max(1.0, exact.abs().max().item()):
            return outcome("fail", Ev("logits ~1e3: {name} max error {e:.3g} against the float64 reference", name=name, e=error))
        worst = max(worst, error)
    return outcome("pass", Ev("logits ~1e3 (float64): finite, max error {e:.2g}", e=worst))


def varying_length_check(ctx: Context):
    for n, t in enumerate((5, 7, 3)):
        q, k, v, d_out = inputs(ctx, ((2, 3, t, 4), (2, 3, t, 4), (2, 3, t, 6)), 800 + n)
        mask = causal_mask(t, device=ctx.device)
        grads = run(ctx, *(x.float() for x in (q, k, v, d_out)), mask)
        truth, same = autograd_truth(q, k, v, d_out, mask, torch.float64), baseline(q, k, v, d_out, mask, torch.float32)
        call = Ev("call {n} (T={t})", n=n + 1, t=t)
        result = against_truth([(Ev("{label}: {what}", label=call, what=name), g, e, s) for name, g, e, s in zip(("dq", "dk", "dv"), grads, truth, same)])
        if result.status != "pass":
            return result
    return outcome("pass", Ev("causal calls with T = 5, 7, 3 in a row all match"))


@dataclass(frozen=True)
class Probe:
    """float64 inputs with Tq == Tk and D == Dv, so transposed gradients still have the right shapes."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    d_out: torch.Tensor
    mask: torch.Tensor | None

    def user(self, ctx: Context):
        mask = None if self.mask is None else self.mask.clone()
        return torch.cat([g.flatten() for g in run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.d_out.clone(), mask)])

    def expected(self, variant):
        return torch.cat([g.flatten() for g in backward_reference(self.q, self.k, self.v, self.d_out, self.mask, variant)])


class AttentionBackwardTask:
    name = "attention_backward"
    forbidden = FORBIDDEN
    builtin_what = Ev("autograd or attention")
    builtin_code = "attn-backward-uses-autograd"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, dtype, i)) for i in range(3)]
        q, k, v, d_out = inputs(ctx, (Q, K, V), 1000, torch.float32)
        mask = random_mask(MASK, ctx.generator(1001), ctx.device)
        named = {"q": q, "k": k, "v": v, "d_out": d_out, "mask": mask}
        defs += [
            CheckDef("gradient.finite-difference", "gradient", partial(finite_difference_check, ctx)),
            CheckDef("mask-leak.padding", "mask-leak", partial(padding_leak_check, ctx)),
            CheckDef("mask-leak.causal", "mask-leak", partial(causal_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, q, k, v, d_out, mask), named)),  # fmt: skip
            CheckDef("robustness.deterministic", "robustness",
                     partial(deterministic_check, lambda: torch.cat([g.flatten() for g in run(ctx, q, k, v, d_out, mask)]))),  # fmt: skip
            CheckDef("robustness.varying-length", "robustness", partial(varying_length_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        shapes = ((2, 3, 6, 4),) * 3
        found = []
        masks = (None, causal_mask(6, device=ctx.device),
                 random_mask((2, 1, 6, 6), ctx.generator(1101), ctx.device) | torch.eye(6, dtype=torch.bool, device=ctx.device))  # fmt: skip
        for n, mask in enumerate(masks):
            found.append(Probe(*inputs(ctx, shapes, 1100 + 10 * n), mask))
        return found

    def hypotheses(self, ctx: Context):
        return (
            ("attn-backward-softmax-jacobian", BackwardVariant(jacobian="no-rowsum")),
            ("attn-backward-softmax-jacobian", BackwardVariant(jacobian="diagonal")),
            ("attn-backward-scale-missing", BackwardVariant(unscaled="dq")),
            ("attn-backward-scale-missing", BackwardVariant(unscaled="dk")),
            ("attn-backward-scale-missing", BackwardVariant(unscaled="both")),
            ("attn-backward-dk-transpose", BackwardVariant(transposed="dk")),
            ("attn-backward-dv-transpose", BackwardVariant(transposed="dv")),
            ("attn-backward-mask-not-reapplied", BackwardVariant(remask=False)),
            ("scale-missing", BackwardVariant(base=replace(CORRECT, scale="none"))),
            ("scale-by-d", BackwardVariant(base=replace(CORRECT, scale="d"))),
        )


TASK = AttentionBackwardTask()
