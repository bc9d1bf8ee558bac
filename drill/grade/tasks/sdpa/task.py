"""The ``sdpa`` task: ``scaled_dot_product_attention(q, k, v, mask=None)``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import (
    deterministic_check,
    dtype_id,
    fully_masked_check,
    jacobian_check,
    large_logits_verdict,
    mask_forms,
    no_mutation_check,
    padding_mask,
    random_mask,
)
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, same_output, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.reference import CORRECT, Variant, attention, causal_mask
from drill.text.messages import Ev

# Sizes: B, H, T and head dims never coincide, so a transposition cannot hide.
SHAPE_CASES = (
    ("shape.4d", (2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4), None, False),
    ("shape.3d", (3, 6, 4), (3, 6, 4), (3, 6, 4), None, False),
    ("shape.cross", (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), (2, 1, 5, 7), False),
    ("shape.t1", (2, 3, 1, 4), (2, 3, 1, 4), (2, 3, 1, 4), None, False),
    ("shape.mask-2d", (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), (5, 7), False),
    ("shape.non-contiguous", (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), None, True),
)
Q, K, V, MASK = (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), (2, 1, 5, 7)

HYPOTHESES = (
    ("scale-missing", Variant(scale="none")),
    ("scale-by-d", Variant(scale="d")),
    ("softmax-wrong-dim", Variant(softmax_dim=-2)),
    ("softmax-wrong-dim", Variant(softmax_dim=1)),  # hard-coded for [B, T, T]: over the heads of [B, H, T, T]
    ("mask-inverted", Variant(mask="inverted")),
    ("mask-after-softmax", Variant(mask="after-softmax")),
    ("mask-on-queries", Variant(mask="transposed")),
    ("mask-ignored", Variant(mask="ignored")),
    ("k-v-swapped", Variant(order=(0, 2, 1))),
)


def run(ctx: Context, q, k, v, mask=None):
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return unpack(ctx.call(ctx.entry, *args))


def reference(q, k, v, mask, dtype, variant: Variant = CORRECT):
    q, k, v = ((q, k, v)[i].to(dtype) for i in variant.order)
    return attention(q, k, v, mask, variant)


def shape_check(ctx: Context, qs, ks, vs, ms, non_contiguous):
    gen = ctx.generator(1)
    if non_contiguous:
        q, k, v = (ctx.randn(s[0], s[2], s[1], s[3], gen=gen).transpose(1, 2) for s in (qs, ks, vs))
    else:
        q, k, v = (ctx.randn(*s, gen=gen) for s in (qs, ks, vs))
    mask = random_mask(ms, gen, ctx.device) if ms else None
    out, weights = run(ctx, q, k, v, mask)
    problem = expect_like(out, (*qs[:-1], vs[-1]), q)
    if weights is not None:
        expect_shape(weights, (*qs[:-1], ks[-2]), Ev("weights"))
    if problem:
        return outcome("fail", problem)
    if non_contiguous:
        again, _ = run(ctx, *(t.contiguous() for t in (q, k, v)), mask)
        if not same_output(out, again, 1e-5):
            return outcome("fail", Ev("non-contiguous inputs give a different output than their contiguous copies"))
    return outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def drawn_shapes(ctx: Context, offset: int):
    """(q, k, v, mask) shapes drawn from the grade's seed: B, H, Tq, Tk, head dim and value dim all differ."""
    b, h, tq, tk, d, dv = ctx.sizes(300 + offset, (1, 4), (1, 6), (1, 12), (2, 12), (2, 16), (2, 16))
    return (b, h, tq, d), (b, h, tk, d), (b, h, tk, dv), (b, 1, tq, tk)


def drawn_at(what: Ev, qs, ks, vs) -> Ev:
    """``what`` with the drawn shapes it was computed at (the fixed shapes go unnamed)."""
    return what if qs == Q else Ev("{what} at q {q}, k {k}, v {v}", what=what, q=list(qs), k=list(ks), v=list(vs))


def numerical_check(ctx: Context, dtype, offset: int):
    """The fixed shapes, then shapes drawn from the seed."""
    gen = ctx.generator(100 + offset)
    pairs = []
    for qs, ks, vs, ms in ((Q, K, V, MASK), drawn_shapes(ctx, offset)):
        q, k, v = (ctx.randn(*s, gen=gen, dtype=torch.float64) for s in (qs, ks, vs))
        for mask in (None, random_mask(ms, gen, ctx.device)):
            out, weights = run(ctx, q.to(dtype), k.to(dtype), v.to(dtype), mask)
            truth, truth_w = reference(q, k, v, mask, torch.float64)
            same, same_w = reference(q, k, v, mask, dtype)
            output, weights_label = (Ev("output"), Ev("weights")) if mask is None else (Ev("masked output"), Ev("masked weights"))
            pairs.append((drawn_at(output, qs, ks, vs), out, truth, same))
            if weights is not None:
                pairs.append((drawn_at(weights_label, qs, ks, vs), weights, truth_w, same_w))
    return against_truth(pairs)


def mask_forms_check(ctx: Context):
    """Every mask form broadcastable to [B, H, Tq, Tk], per-head masks included (float32 against the reference)."""
    gen = ctx.generator(150)
    q, k, v = (ctx.randn(*s, gen=gen, dtype=torch.float64) for s in (Q, K, V))
    pairs = []
    for label, mask in mask_forms(Q[0], Q[1], Q[2], K[2], gen, ctx.device):
        out, _ = run(ctx, q.float(), k.float(), v.float(), mask)
        truth, same = (reference(q, k, v, mask, dt)[0] for dt in (torch.float64, torch.float32))
        pairs.append((Ev("output with no mask") if mask is None else Ev("output with a {form}", form=label), out, truth, same))
    result = against_truth(pairs)
    if result.status == "pass":
        result.message = Ev("{n} mask forms: {what}", n=len(pairs), what=result.message)
    return result


def gradient_check(ctx: Context, dtype):
    gen = ctx.generator(200)
    base = [ctx.randn(*s, gen=gen, dtype=torch.float64) for s in (Q, K, V)]
    mask = random_mask(MASK, gen, ctx.device)
    seed_grad = ctx.randn(*Q[:-1], V[-1], gen=gen, dtype=torch.float64)
    leaves = [t.detach().to(dtype).requires_grad_() for t in base]
    out, _ = run(ctx, *leaves, mask)
    expect_shape(out, seed_grad.shape)
    ctx.call(lambda: (out * seed_grad.to(out.dtype)).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, dtype):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in base]
        ref_out, _ = attention(*refs, mask)
        (ref_out * seed_grad.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, truth, same in zip("qkv", leaves, grads[torch.float64], grads[dtype]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("d{name}", name=name), leaf.grad, truth, same))
    return against_truth(pairs)


def padding_leak_check(ctx: Context):
    gen = ctx.generator(300)
    lengths = (7, 1, 4)
    q, k, v = (ctx.randn(3, 2, t, d, gen=gen, dtype=torch.float64) for t, d in ((5, 4), (7, 4), (7, 6)))
    mask = padding_mask(lengths, 7, ctx.device)
    base, _ = run(ctx, q, k, v, mask)
    for b, n in enumerate(lengths):
        for j in range(n, 7):
            k2, v2 = k.clone(), v.clone()
            k2[b, :, j] += 10 * torch.randn(4, generator=gen, dtype=torch.float64).to(ctx.device)
            v2[b, :, j] += 10 * torch.randn(6, generator=gen, dtype=torch.float64).to(ctx.device)
            out, _ = run(ctx, q, k2, v2, mask)
            expect_shape(out, base.shape)
            change = moved(out[b], base[b]).amax(dim=0)  # [Tq]
            if (change > LEAK_THRESHOLD).any():
                i = int((change > LEAK_THRESHOLD).nonzero()[0])
                return outcome("fail", Ev("sample {b} (length {n}): query {i} sees padded key {j} (moved {change:.3g})",
                                          b=b, n=n, i=i, j=j, change=change[i].item()))  # fmt: skip
    return outcome("pass", Ev("padded keys (lengths 7, 1, 4) never reach an output"))


def causal_inputs(ctx: Context, offset: int):
    gen = ctx.generator(offset)
    return ctx.randn(2, 6, 4, gen=gen, dtype=torch.float64), causal_mask(6, device=ctx.device)


def future_leak_check(ctx: Context):
    x, mask = causal_inputs(ctx, 400)
    base, _ = run(ctx, x, x.clone(), x.clone(), mask)
    expect_shape(base, x.shape)
    leaks = []
    for j in range(1, x.shape[1]):
        x2 = x.clone()
        x2[:, j] += 10.0
        out, _ = run(ctx, x2, x2.clone(), x2.clone(), mask)
        change = moved(out, base).amax(dim=0)  # [T]
        leaks += [(i, j) for i in range(j) if change[i] > LEAK_THRESHOLD]
    if leaks:
        i, j = min(leaks)
        return outcome("fail", Ev("with a causal mask, position {i} changes when future position {j} changes", i=i, j=j))
    return outcome("pass", Ev("perturbing future tokens never moves earlier outputs"))


def sdpa_jacobian_check(ctx: Context):
    x, mask = causal_inputs(ctx, 500)
    x.requires_grad_()
    return jacobian_check(ctx, lambda z: run(ctx, z, z, z, mask)[0], x)


def large_logits_check(ctx: Context):
    gen = ctx.generator(600)
    q, k = (31.6 * ctx.randn(*s, gen=gen, dtype=torch.float64) for s in (Q, K))
    v = ctx.randn(*V, gen=gen, dtype=torch.float64)
    truth = reference(q, k, v, None, torch.float64)[0]
    return large_logits_verdict(run(ctx, q, k, v)[0], truth, lambda: run(ctx, q / 31.6, k / 31.6, v)[0])


def key_shift_check(ctx: Context):
    gen = ctx.generator(700)
    q, k, v = (ctx.randn(*s, gen=gen) for s in (Q, K, V))
    shift = 3 * ctx.randn(K[-1], gen=gen)
    base, _ = run(ctx, q, k, v)
    out, _ = run(ctx, q, k + shift, v)
    expect_shape(out, base.shape)
    change = (out - base).abs().max().item()
    ref_change = (reference(q, k + shift, v, None, q.dtype)[0] - reference(q, k, v, None, q.dtype)[0]).abs().max()
    allowed = 2 * ref_change.item() + 1e-5 * max(1.0, base.abs().max().item())
    if not change <= allowed:
        return outcome("fail", Ev("adding one vector to every key moved the output by {change:.3g} (allowed {allowed:.2g})",
                                  change=change, allowed=allowed))  # fmt: skip
    return outcome("pass", Ev("adding one vector to every key moves the output by {change:.2g}", change=change))


def varying_length_check(ctx: Context):
    gen = ctx.generator(800)
    for n, t in enumerate((5, 7, 3)):
        q, k, v = (ctx.randn(2, 3, t, d, gen=gen) for d in (4, 4, 6))
        mask = causal_mask(t, device=ctx.device)
        out, _ = run(ctx, q, k, v, mask)
        truth, same = (reference(q, k, v, mask, dt)[0] for dt in (torch.float64, q.dtype))
        result = against_truth([(Ev("call {n} (T={t})", n=n + 1, t=t), out, truth, same)])
        if result.status != "pass":
            return result
    return outcome("pass", Ev("calls with T = 5, 7, 3 in a row all match"))


def sdpa_fully_masked(ctx: Context):
    gen = ctx.generator(900)
    q, k, v = (ctx.randn(*s, gen=gen) for s in (Q, K, V))
    mask = random_mask(MASK, gen, ctx.device)
    mask[0, 0, 2] = False
    return fully_masked_check(ctx, lambda: run(ctx, q, k, v, mask)[0], (0, slice(None), 2))


def robustness_inputs(ctx: Context):
    gen = ctx.generator(1000)
    q, k, v = (ctx.randn(*s, gen=gen) for s in (Q, K, V))
    return q, k, v, random_mask(MASK, gen, ctx.device)


@dataclass(frozen=True)
class Probe:
    """One diagnosis input (float64): the user's output and the reference under a variant."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    mask: torch.Tensor | None

    def user(self, ctx: Context):
        mask = None if self.mask is None else self.mask.clone()
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), mask)[0]

    def expected(self, variant: Variant):
        return reference(self.q, self.k, self.v, self.mask, torch.float64, variant)[0]


class SdpaTask:
    name = "sdpa"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, dtype, i)) for i in range(3)]
            grad_id = dtype_id("gradient", dtype, "gradient.qkv")
            defs.append(CheckDef(grad_id, "gradient", partial(gradient_check, ctx, dtype)))
        q, k, v, mask = robustness_inputs(ctx)
        defs += [
            CheckDef("numerical.mask-forms", "numerical", partial(mask_forms_check, ctx)),
            CheckDef("mask-leak.padding", "mask-leak", partial(padding_leak_check, ctx)),
            CheckDef("mask-leak.future", "mask-leak", partial(future_leak_check, ctx)),
            CheckDef("mask-leak.jacobian", "mask-leak", partial(sdpa_jacobian_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("stability.key-shift", "stability", partial(key_shift_check, ctx)),
            CheckDef("stability.fully-masked-row", "stability", partial(sdpa_fully_masked, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, q, k, v, mask), {"q": q, "k": k, "v": v, "mask": mask}),
            ),
            CheckDef(
                "robustness.deterministic",
                "robustness",
                partial(deterministic_check, lambda: run(ctx, q.clone(), k.clone(), v.clone(), mask.clone())[0]),
            ),
            CheckDef("robustness.varying-length", "robustness", partial(varying_length_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        gen = ctx.generator(1100)
        q, k, v = (ctx.randn(2, 3, 6, 4, gen=gen, dtype=torch.float64) for _ in range(3))
        diag = torch.eye(6, dtype=torch.bool, device=ctx.device)
        masks = (None, padding_mask((6, 2), 6, ctx.device), random_mask((2, 1, 6, 6), gen, ctx.device) | diag)
        return [Probe(q, k, v, m) for m in masks]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = SdpaTask()
