"""The ``flash_decoding`` task: ``split_kv_attention(q, k, v, n_splits)``, Flash-Decoding's split-KV attention.

The keys are cut into chunks of ceil(Tk / n_splits) (the last may be shorter); each chunk's
partial output (normalised inside the chunk) and log-sum-exp are merged exactly, so the result
must equal full, non-causal attention. :func:`split_reference` reproduces the merge's classic
mistakes for the diagnosis; the truth is plain float64 attention.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.common import deterministic_check, dtype_id, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, first_nonfinite, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.reference import CORRECT, Variant, attention, scale_factor
from drill.text.messages import Ev

# (id, q shape, Tk, Dv, n_splits): B, H, Tq, D, Dv never coincide where they appear together.
SHAPE_CASES = (
    ("shape.decode", (2, 3, 1, 8), 37, 8, 4),
    ("shape.3d", (3, 1, 8), 20, 8, 3),
    ("shape.cross", (2, 3, 5, 8), 37, 6, 4),
    ("shape.fewer-keys-than-splits", (2, 3, 1, 8), 2, 8, 4),
)
# (Tk, n_splits): chunks that divide Tk, a short last chunk (10, 10, 10, 7), a last chunk of one
# key (3, 3, 3, 1), one split, more splits than keys, seven splits of 10 with a last of 4.
NUMERICAL_CASES = ((40, 4), (37, 4), (10, 4), (8, 1), (5, 8), (64, 7))
HALF_CASES = ((37, 4), (64, 7))
PROBE_CASES = ((37, 4), (10, 4), (23, 3))


@dataclass(frozen=True)
class SplitVariant:
    """A merging mistake on top of an attention mistake (``base``)."""

    base: Variant = CORRECT
    merge: str = "lse"  # | average: the partials' plain mean | max-only: weights exp(m_c - M), the chunk sums
    #                     forgotten | unnormalised: sum of exp(L_c - max L) o_c, never divided by the total weight
    #                     | argmax-lse / argmax-max: only the partial of the chunk with the largest L_c (or m_c)
    tail: str = "keep"  # | dropped: the short last chunk skipped | floor: chunks of Tk // n_splits, the rest never read


def chunks(tk: int, n_splits: int, tail: str = "keep") -> list[tuple[int, int]]:
    """The (start, stop) key ranges a split visits."""
    if tail == "floor":
        size = max(tk // n_splits, 1)
        stop = min(size * n_splits, tk)
    else:
        size = -(-tk // n_splits)
        stop = tk if tail == "keep" else tk // size * size
    return [(s, min(s + size, stop)) for s in range(0, stop, size)]


def split_reference(q, k, v, n_splits: int, variant=CORRECT):
    """Split-KV attention chunk by chunk (in the inputs' dtype), with the mistake ``variant`` models."""
    variant = variant if isinstance(variant, SplitVariant) else SplitVariant(base=variant)
    base = variant.base
    q, k, v = ((q, k, v)[i] for i in base.order)
    scale = scale_factor(base, q.shape[-1], None)
    outs, maxes, lses = [], [], []
    for start, stop in chunks(k.shape[-2], n_splits, variant.tail):
        s = q @ k[..., start:stop, :].transpose(-2, -1) * scale
        m = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - m)
        total = p.sum(dim=-1, keepdim=True)
        outs.append(p @ v[..., start:stop, :] / total)
        maxes.append(m)
        lses.append(m + torch.log(total))
    outs, maxes, lses = torch.stack(outs), torch.stack(maxes), torch.stack(lses)
    if variant.merge == "average":
        return outs.mean(dim=0)
    logits = maxes if variant.merge in ("max-only", "argmax-max") else lses
    if variant.merge.startswith("argmax"):
        best = logits.argmax(dim=0, keepdim=True).expand(1, *outs.shape[1:])
        return outs.gather(0, best)[0]
    weights = torch.exp(logits - logits.amax(dim=0))
    merged = (weights * outs).sum(dim=0)
    return merged if variant.merge == "unnormalised" else merged / weights.sum(dim=0)


def run(ctx: Context, q, k, v, n_splits: int):
    return unpack(ctx.call(ctx.entry, q, k, v, n_splits))[0]


def qkv(ctx: Context, q_shape, tk: int, dv: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    lead, d = q_shape[:-2], q_shape[-1]
    q = ctx.randn(*q_shape, gen=gen, dtype=dtype)
    return q, ctx.randn(*lead, tk, d, gen=gen, dtype=dtype), ctx.randn(*lead, tk, dv, gen=gen, dtype=dtype)


def truth(q, k, v, dtype):
    return attention(q.to(dtype), k.to(dtype), v.to(dtype))[0]


def baseline(q, k, v, n_splits: int, dtype):
    """What the same computation achieves in ``dtype``: the less accurate of full attention and the
    split-and-merge reference (half precision rounds the partials and the merge weights too)."""
    exact = truth(q, k, v, torch.float64)
    runs = (truth(q, k, v, dtype), split_reference(q.to(dtype), k.to(dtype), v.to(dtype), n_splits))
    return max(runs, key=lambda r: (r.double() - exact).abs().max().item())


def shape_check(ctx: Context, q_shape, tk, dv, n_splits):
    q, k, v = qkv(ctx, q_shape, tk, dv, 1, torch.float32)
    out = run(ctx, q, k, v, n_splits)
    problem = expect_like(out, (*q_shape[:-1], dv), q)
    if problem:
        return outcome("fail", problem)
    return outcome("pass", Ev("output {shape} ({config})", shape=list(out.shape), config=f"Tk={tk}, n_splits={n_splits}"))


def numerical_check(ctx: Context, tk: int, n_splits: int, tq: int, dtype, offset: int):
    q, k, v = qkv(ctx, (2, 3, tq, 8), tk, 8, 100 + offset)
    out = run(ctx, q.to(dtype), k.to(dtype), v.to(dtype), n_splits)
    sizes = [b - a for a, b in chunks(tk, n_splits)]
    label = Ev("output ({config}: chunks of {sizes})", config=f"Tq={tq}, Tk={tk}, n_splits={n_splits}", sizes=", ".join(map(str, sizes)))
    return against_truth([(label, out, truth(q, k, v, torch.float64), baseline(q, k, v, n_splits, dtype))])


def drawn_check(ctx: Context):
    """B, H, Tq, Tk, D, Dv and n_splits drawn from the seed (no size is 8, the head dim of every fixed
    numerical case), float32."""
    b, h, tq, tk, d, dv, n_splits = ctx.sizes(130, (1, 3), (1, 5), (1, 4), (6, 45), (2, 16), (2, 16), (2, 9), avoid=(8,))
    q, k, v = qkv(ctx, (b, h, tq, d), tk, dv, 130)
    out = run(ctx, q.float(), k.float(), v.float(), n_splits)
    sizes = ", ".join(str(stop - start) for start, stop in chunks(tk, n_splits))
    where = Ev("{config}, drawn from the seed", config=f"B={b}, H={h}, Tq={tq}, Tk={tk}, D={d}, Dv={dv}, n_splits={n_splits}")
    result = against_truth([(Ev("output ({what}): chunks of {sizes}", what=where, sizes=sizes), out, truth(q, k, v, torch.float64),
                             baseline(q, k, v, n_splits, torch.float32))])  # fmt: skip
    if result.status == "pass":
        result.message = Ev("{what} ({where})", what=result.message, where=where)
    return result


def gradient_check(ctx: Context, dtype):
    base = qkv(ctx, (2, 3, 2, 8), 37, 6, 200)
    seed_grad = ctx.randn(2, 3, 2, 6, gen=ctx.generator(201), dtype=torch.float64)
    leaves = [t.to(dtype).requires_grad_() for t in base]
    out = run(ctx, *leaves, 4)
    expect_shape(out, seed_grad.shape)
    ctx.call(lambda: (out * seed_grad.to(out.dtype)).sum().backward(), watch=False)
    def grads(forward, precision):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in base]
        (forward(*refs) * seed_grad.to(precision)).sum().backward()
        return [r.grad for r in refs]

    exact = grads(lambda *t: truth(*t, torch.float64), torch.float64)
    runs = (grads(lambda *t: truth(*t, dtype), dtype), grads(lambda *t: split_reference(*t, 4), dtype))
    worse = [max((r[i] for r in runs), key=lambda g: (g.double() - exact[i]).abs().max().item()) for i in range(3)]
    pairs = []
    for name, leaf, exact, same in zip("qkv", leaves, exact, worse):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("{name} ({config})", name=f"d{name}", config="Tk=37, n_splits=4"), leaf.grad, exact, same))
    return against_truth(pairs)


def sequence_leak_check(ctx: Context):
    """Every key of a sample moves that sample's output, and no other sample's (float64)."""
    tk, n_splits = 10, 4  # chunks of 3, 3, 3, 1
    q, k, v = qkv(ctx, (2, 2, 1, 4), tk, 4, 300)
    base = run(ctx, q, k, v, n_splits)
    expect_shape(base, (2, 2, 1, 4))
    gen = ctx.generator(301)
    for b in range(2):
        for j in range(tk):
            k2, v2 = k.clone(), v.clone()
            k2[b, :, j] += 3 * ctx.randn(4, gen=gen, dtype=torch.float64)
            v2[b, :, j] += 10 * ctx.randn(4, gen=gen, dtype=torch.float64)
            change = moved(run(ctx, q, k2, v2, n_splits), base).amax(dim=(1, 2))  # [B]
            if change[1 - b] > LEAK_THRESHOLD:
                return outcome("fail", Ev("sample {other} moves when key {j} of sample {b} changes (moved {change:.3g})", other=1 - b, j=j, b=b,
                                          change=change[1 - b].item()))  # fmt: skip
            if not change[b] > LEAK_THRESHOLD:
                return outcome("fail", Ev("key {j} of sample {b} never reaches its output (Tk={tk}, n_splits={n_splits}: chunks of 3, 3, 3, 1)",
                                          j=j, b=b, tk=tk, n_splits=n_splits))  # fmt: skip
    return outcome("pass", Ev("Tk=10, n_splits=4: every key moves its own sample's output and no other sample's"))


def large_logits_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 3, 1, 8), 37, 8, 600)
    q, k = 31.6 * q, 31.6 * k
    out, exact = run(ctx, q, k, v, 4), truth(q, k, v, torch.float64)
    expect_shape(out, exact.shape)
    bad = first_nonfinite(out, exact)
    if bad is not None:
        return outcome("fail", Ev("logits ~1e3 (float64, n_splits=4) give a non-finite output at {at}", at=list(bad)),
                       "flash-decoding-merge-unshifted")  # fmt: skip
    error = (out - exact).abs().max().item()
    if error > 1e-6 * max(1.0, exact.abs().max().item()):
        return outcome("fail", Ev("logits ~1e3 (float64, n_splits=4): max error {e:.3g} against the float64 reference", e=error))
    return outcome("pass", Ev("logits ~1e3 (float64, n_splits=4): finite, max error {e:.2g}", e=error))


def key_shift_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 3, 1, 8), 37, 8, 700, torch.float32)
    shift = 3 * ctx.randn(8, gen=ctx.generator(701))
    base, out = run(ctx, q, k, v, 4), run(ctx, q, k + shift, v, 4)
    expect_shape(out, base.shape)
    change = (out - base).abs().max().item()
    ref_change = (truth(q, k + shift, v, torch.float32) - truth(q, k, v, torch.float32)).abs().max().item()
    allowed = 2 * ref_change + 1e-5 * max(1.0, base.abs().max().item())
    if not change <= allowed:
        return outcome("fail", Ev("adding one vector to every key moved the output by {change:.3g} (allowed {allowed:.2g})", change=change,
                                  allowed=allowed))  # fmt: skip
    return outcome("pass", Ev("adding one vector to every key moves the output by {change:.2g}", change=change))


def varying_splits_check(ctx: Context):
    for n, (tk, n_splits) in enumerate(((37, 4), (10, 3), (50, 5))):
        q, k, v = qkv(ctx, (2, 3, 1, 8), tk, 8, 800 + n)
        out = run(ctx, q.float(), k.float(), v.float(), n_splits)
        label = Ev("call {n} ({config})", n=n + 1, config=f"Tk={tk}, n_splits={n_splits}")
        result = against_truth([(label, out, truth(q, k, v, torch.float64), baseline(q, k, v, n_splits, torch.float32))])
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different Tk and n_splits in a row all match"))


@dataclass(frozen=True)
class Probe:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    n_splits: int

    def user(self, ctx: Context):
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.n_splits)

    def expected(self, variant):
        return split_reference(self.q, self.k, self.v, self.n_splits, variant)


class FlashDecodingTask:
    name = "flash_decoding"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for n, (tk, n_splits) in enumerate(NUMERICAL_CASES):
            check = partial(numerical_check, ctx, tk, n_splits, 1, torch.float32, n)
            defs.append(CheckDef(f"numerical.tk{tk}-splits{n_splits}", "numerical", check))
        defs.append(CheckDef("numerical.queries-4", "numerical", partial(numerical_check, ctx, 37, 4, 4, torch.float32, 50)))
        defs.append(CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)))
        for dtype in ctx.dtypes[1:]:
            for n, (tk, n_splits) in enumerate(HALF_CASES):
                check = partial(numerical_check, ctx, tk, n_splits, 1, dtype, 60 + n)
                defs.append(CheckDef(f"{dtype_id('numerical', dtype)}.tk{tk}-splits{n_splits}", "numerical", check))
        defs += [CheckDef(dtype_id("gradient", dtype, "gradient.qkv"), "gradient",
                          partial(gradient_check, ctx, dtype)) for dtype in ctx.dtypes]  # fmt: skip
        q, k, v = qkv(ctx, (2, 3, 1, 8), 37, 8, 1000, torch.float32)
        defs += [
            CheckDef("mask-leak.per-sequence", "mask-leak", partial(sequence_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("stability.key-shift", "stability", partial(key_shift_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, q, k, v, 4), {"q": q, "k": k, "v": v}),
            ),
            CheckDef(
                "robustness.deterministic",
                "robustness",
                partial(deterministic_check, lambda: run(ctx, q.clone(), k.clone(), v.clone(), 4)),
            ),
            CheckDef("robustness.varying-splits", "robustness", partial(varying_splits_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        found = []
        for n, (tk, n_splits) in enumerate(PROBE_CASES):
            q, k, v = qkv(ctx, (1, 2, 2, 8), tk, 8, 1100 + n)
            found.append(Probe(q, k, v, n_splits))
        return found

    def hypotheses(self, ctx: Context):
        return (
            ("flash-decoding-plain-average", SplitVariant(merge="average")),
            ("flash-decoding-merge-max-only", SplitVariant(merge="max-only")),
            # The hard form of the same max: only the chunk with the largest log-sum-exp (or max) is kept.
            ("flash-decoding-merge-max-only", SplitVariant(merge="argmax-lse")),
            ("flash-decoding-merge-max-only", SplitVariant(merge="argmax-max")),
            ("flash-decoding-merge-unnormalised", SplitVariant(merge="unnormalised")),
            ("flash-decoding-tail-dropped", SplitVariant(tail="dropped")),
            ("flash-decoding-tail-dropped", SplitVariant(tail="floor")),
            ("scale-missing", SplitVariant(base=replace(CORRECT, scale="none"))),
            ("scale-by-d", SplitVariant(base=replace(CORRECT, scale="d"))),
            ("k-v-swapped", SplitVariant(base=replace(CORRECT, order=(0, 2, 1)))),
        )


TASK = FlashDecodingTask()
