"""The ``flash`` task: ``flash_attention(q, k, v, causal=False, block_size=64)``, tiled with an online softmax.

Besides matching the reference, the user's call must never hold a whole score matrix: a
TorchDispatchMode on the user side sees every tensor the call's aten ops produce, however they
were written (drill.grade.user.spy.LargestTensor).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.reference import CORRECT, Variant, attention, causal_mask, scale_factor
from drill.grade.checks.common import deterministic_check, jacobian_check, large_logits_verdict, no_mutation_check
from drill.text.messages import Ev

# (id, q shape, kv length, Dv, causal, block_size): B, H, T, D, Dv never coincide.
SHAPE_CASES = (
    ("shape.base", (2, 3, 40, 8), 40, 8, False, 16),
    ("shape.causal", (2, 3, 40, 8), 40, 8, True, 16),
    ("shape.t1", (2, 3, 1, 8), 1, 8, True, 16),
    ("shape.cross", (2, 3, 24, 8), 40, 6, False, 16),
)
# (T, block_size): not dividing, dividing, one block, a small odd block.
NUMERICAL_CASES = ((40, 16), (48, 16), (40, 64), (37, 7))
# The memory check: a tiled kernel peaks at H*T*block = 25 600 elements, one head's scores are 40 000.
MEMORY = (1, 2, 200, 16, 64)  # B, H, T, D, block_size
PROBE_BLOCK = 32  # diagnosis probes use T=100: three full key blocks and a partial one
ALL_BLOCKS = 10**9  # FlashVariant.causal_blocks of a kernel that ignores causal when choosing key blocks


@dataclass(frozen=True)
class FlashVariant:
    """A tiling mistake on top of an attention mistake (``base``)."""

    base: Variant = CORRECT
    rescale: str = "both"  # | none: l and acc never corrected | sum-only: l corrected, acc not
    normalise: bool = True  # False: acc returned without / l
    causal_blocks: int = 0  # -1: query block i visits key blocks 0..i-1 only; ALL_BLOCKS: every key block
    tail: bool | str = True  # False: T // block_size blocks, the last partial one dropped; "keys" / "queries": only there
    lse_pass: bool = False  # two passes: L = m + log(l) from masked scores, then exp(S - L) @ V on S as ``base`` masks it


def tiled_reference(q, k, v, causal: bool, block: int, variant=CORRECT):
    """The online-softmax kernel, block by block in float64, with the mistake ``variant`` models."""
    variant = variant if isinstance(variant, FlashVariant) else FlashVariant(base=variant)
    base = variant.base
    q, k, v = ((q, k, v)[i] for i in base.order)
    tq, tk = q.shape[-2], k.shape[-2]
    q_end = tq if variant.tail in (True, "keys") else tq // block * block
    k_end = tk if variant.tail in (True, "queries") else tk // block * block
    scale = scale_factor(base, q.shape[-1], None)
    out = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for qs in range(0, q_end, block):
        rows = torch.arange(qs, min(qs + block, q_end), device=q.device)[:, None]
        m = q.new_full((*q.shape[:-2], len(rows)), float("-inf"))
        l = torch.zeros_like(m)
        acc = q.new_zeros(*m.shape, v.shape[-1])
        stop = min(k_end, (qs // block + 1 + variant.causal_blocks) * block) if causal else k_end
        spans = [torch.arange(ks, min(ks + block, k_end), device=q.device)[None, :] for ks in range(0, stop, block)]

        def scores(cols, shift):
            s = q[..., rows[:, 0], :] @ k[..., cols[0], :].transpose(-2, -1) * scale
            return s.masked_fill(cols > rows + shift, float("-inf")) if causal and shift != "none" else s

        for cols in spans:
            s = scores(cols, 0 if variant.lse_pass else base.causal)
            m_new = torch.maximum(m, s.amax(dim=-1))
            safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - safe[..., None])
            alpha = torch.exp(m - safe)
            l = (l if variant.rescale == "none" else alpha * l) + p.sum(dim=-1)
            acc = (alpha[..., None] * acc if variant.rescale == "both" else acc) + p @ v[..., cols[0], :]
            m = m_new
        if variant.lse_pass:  # the second pass: P = exp(S - L) is already normalised
            lse = (m + l.log())[..., None]
            acc = sum(torch.exp(scores(cols, base.causal) - lse) @ v[..., cols[0], :] for cols in spans)
            l = torch.ones_like(l)
        out[..., rows[:, 0], :] = acc / l[..., None] if variant.normalise else acc
    return out


def run(ctx: Context, q, k, v, causal: bool, block: int):
    return unpack(ctx.call(ctx.entry, q, k, v, causal=causal, block_size=block))[0]


def qkv(ctx: Context, shape, tk: int, dv: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    b, h, tq, d = shape
    return tuple(ctx.randn(b, h, t, e, gen=gen, dtype=dtype) for t, e in ((tq, d), (tk, d), (tk, dv)))


def truth(q, k, v, causal: bool, dtype):
    mask = causal_mask(q.shape[-2], device=q.device) if causal else None
    return attention(q.to(dtype), k.to(dtype), v.to(dtype), mask)[0]


def versus_truth(label: Ev, out, q, k, v, causal: bool):
    return against_truth([(label, out, truth(q, k, v, causal, torch.float64), truth(q, k, v, causal, torch.float32))])


def shape_check(ctx: Context, shape, tk, dv, causal, block):
    q, k, v = qkv(ctx, shape, tk, dv, 1, torch.float32)
    out = run(ctx, q, k, v, causal, block)
    problem = expect_like(out, (*shape[:-1], dv), q)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def numerical_check(ctx: Context, t: int, block: int, causal: bool, offset: int):
    q, k, v = qkv(ctx, (2, 3, t, 8), t, 8, 100 + offset)
    out = run(ctx, q.float(), k.float(), v.float(), causal, block)
    return versus_truth(Ev("output (T={t}, block_size={block})", t=t, block=block), out, q, k, v, causal)


def cross_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 3, 24, 8), 40, 6, 150)
    out = run(ctx, q.float(), k.float(), v.float(), False, 16)
    return versus_truth(Ev("output (Tq=24, Tk=40)"), out, q, k, v, False)


def drawn_check(ctx: Context):
    """B, H, Tq, Tk, D, Dv and block_size drawn from the seed (no size is 8, the head dim of every fixed
    numerical case), and causal (then Tk = Tq) or a cross call, as the seed says."""
    b, h, tq, tk, d, dv, block = ctx.sizes(130, (1, 3), (1, 4), (9, 40), (9, 40), (2, 16), (2, 16), (3, 17), avoid=(8,))
    causal = bool(torch.randint(2, (), generator=ctx.generator(131)))
    tk = tq if causal else tk
    q, k, v = qkv(ctx, (b, h, tq, d), tk, dv, 132)
    where = Ev("B={b}, H={h}, Tq={tq}, Tk={tk}, D={d}, Dv={dv}, block_size={block}, causal={causal}, drawn from the seed",
               b=b, h=h, tq=tq, tk=tk, d=d, dv=dv, block=block, causal=causal)  # fmt: skip
    result = versus_truth(Ev("output ({where})", where=where), run(ctx, q.float(), k.float(), v.float(), causal, block), q, k, v, causal)
    if result.status == "pass":
        result.message = Ev("{what} ({where})", what=result.message, where=where)
    return result


def gradient_check(ctx: Context):
    base = qkv(ctx, (2, 3, 37, 8), 37, 8, 200)
    seed_grad = ctx.randn(2, 3, 37, 8, gen=ctx.generator(201), dtype=torch.float64)
    leaves = [t.float().requires_grad_() for t in base]
    out = run(ctx, *leaves, True, 16)
    expect_shape(out, seed_grad.shape)
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in base]
        (truth(*refs, True, precision) * seed_grad.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, exact, same in zip("qkv", leaves, grads[torch.float64], grads[torch.float32]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("d{name} (causal, T=37, block_size=16)", name=name), leaf.grad, exact, same))
    return against_truth(pairs)


def memory_check(ctx: Context):
    b, h, t, d, block = MEMORY
    limit = t * t  # one head's Tq x Tk score matrix
    peaks = []
    for causal in (False, True):
        q, k, v = qkv(ctx, (b, h, t, d), t, d, 300 + causal, torch.float32)
        _, (size, shape, op) = ctx.largest(ctx.entry, q, k, v, causal=causal, block_size=block)
        if size >= limit:
            return outcome(
                "fail",
                Ev("causal={causal}: {op} produced a tensor of shape {shape} ({size} elements), "
                   "at least one head's whole {t} x {t} score matrix; T={t}, block_size={block}",
                   causal=causal, op=op, shape=list(shape), size=size, t=t, block=block),
                "flash-materialises-scores",
            )
        peaks.append(size)
    return outcome("pass", Ev("T={t}, block_size={block}: largest tensor {size} elements (< {limit} = T x T)",
                              t=t, block=block, size=max(peaks), limit=limit))  # fmt: skip


def future_leak_check(ctx: Context):
    x = ctx.randn(2, 1, 10, 4, gen=ctx.generator(400), dtype=torch.float64)
    base = run(ctx, x, x.clone(), x.clone(), True, 4)
    expect_shape(base, x.shape)
    leaks = []
    for j in range(1, 10):
        x2 = x.clone()
        x2[:, :, j] += 10.0
        change = moved(run(ctx, x2, x2.clone(), x2.clone(), True, 4), base).amax(dim=(0, 1))
        leaks += [(i, j) for i in range(j) if change[i] > LEAK_THRESHOLD]
    if leaks:
        i, j = min(leaks)
        return outcome("fail", Ev("causal=True, block_size=4: position {i} changes when future position {j} changes", i=i, j=j))
    return outcome("pass", Ev("causal=True, block_size=4 (T=10): perturbing future tokens never moves earlier outputs"))


def flash_jacobian_check(ctx: Context):
    x = ctx.randn(2, 6, 4, gen=ctx.generator(500), dtype=torch.float64).requires_grad_()
    return jacobian_check(ctx, lambda z: run(ctx, z[:, None], z[:, None], z[:, None], True, 4)[:, 0], x)


def large_logits_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 3, 40, 8), 40, 8, 600)
    big_q, big_k = 31.6 * q, 31.6 * k
    expected = truth(big_q, big_k, v, False, torch.float64)
    return large_logits_verdict(run(ctx, big_q, big_k, v, False, 16), expected, lambda: run(ctx, q, k, v, False, 16))


def varying_block_check(ctx: Context):
    for n, (t, block, causal) in enumerate(((40, 16, True), (5, 16, False), (33, 8, True))):
        q, k, v = qkv(ctx, (2, 3, t, 8), t, 8, 800 + n, torch.float32)
        out = run(ctx, q, k, v, causal, block)
        label = Ev("call {n} (T={t}, block_size={block}, causal={causal})", n=n + 1, t=t, block=block, causal=causal)
        result = versus_truth(label, out, q, k, v, causal)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different T, block_size and causal in a row all match"))


@dataclass(frozen=True)
class Probe:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    causal: bool

    def user(self, ctx: Context):
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.causal, PROBE_BLOCK)

    def expected(self, variant):
        return tiled_reference(self.q, self.k, self.v, self.causal, PROBE_BLOCK, variant)


class FlashTask:
    name = "flash"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for n, (t, block) in enumerate(NUMERICAL_CASES):
            for causal in (False, True):
                check_id = f"numerical.t{t}-block{block}" + (".causal" if causal else "")
                check = partial(numerical_check, ctx, t, block, causal, 2 * n + causal)
                defs.append(CheckDef(check_id, "numerical", check))
        q, k, v = qkv(ctx, (2, 3, 40, 8), 40, 8, 1000, torch.float32)
        defs += [
            CheckDef("numerical.cross", "numerical", partial(cross_check, ctx)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("gradient.qkv", "gradient", partial(gradient_check, ctx)),
            CheckDef("rules.no-score-matrix", "rules", partial(memory_check, ctx)),
            CheckDef("mask-leak.future", "mask-leak", partial(future_leak_check, ctx)),
            CheckDef("mask-leak.jacobian", "mask-leak", partial(flash_jacobian_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, q, k, v, True, 16), {"q": q, "k": k, "v": v}),
            ),
            CheckDef(
                "robustness.deterministic",
                "robustness",
                partial(deterministic_check, lambda: run(ctx, q.clone(), k.clone(), v.clone(), True, 16)),
            ),
            CheckDef("robustness.varying-block", "robustness", partial(varying_block_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        q, k, v = qkv(ctx, (1, 2, 100, 8), 100, 8, 1100)
        return [Probe(q, k, v, causal) for causal in (False, True)]

    def hypotheses(self, ctx: Context):
        return (
            ("flash-missing-rescale", FlashVariant(rescale="none")),
            ("flash-missing-rescale", FlashVariant(rescale="sum-only")),
            ("flash-missing-normalise", FlashVariant(normalise=False)),
            ("flash-causal-block-off-by-one", FlashVariant(causal_blocks=-1)),
            ("flash-tail-block-dropped", FlashVariant(tail=False)),
            ("flash-tail-block-dropped", FlashVariant(tail="keys")),
            ("flash-tail-block-dropped", FlashVariant(tail="queries")),
            ("scale-missing", FlashVariant(base=replace(CORRECT, scale="none"))),
            ("scale-by-d", FlashVariant(base=replace(CORRECT, scale="d"))),
            ("causal-off-by-one", FlashVariant(base=replace(CORRECT, causal=1))),
            # A kernel that visits every key block and lets the mask alone decide: key i + 1 crosses into the next block.
            ("causal-off-by-one", FlashVariant(base=replace(CORRECT, causal=1), causal_blocks=ALL_BLOCKS)),
            ("causal-blocks-self", FlashVariant(base=replace(CORRECT, causal=-1))),
            ("causal-mask-missing", FlashVariant(base=replace(CORRECT, causal="none"))),  # no mask in the diagonal tile
            ("causal-mask-missing", FlashVariant(base=replace(CORRECT, causal="none"), causal_blocks=ALL_BLOCKS)),
            # The same mistake in a two-pass kernel: L from masked scores, exp(S - L) recomputed without the mask.
            ("causal-mask-missing", FlashVariant(base=replace(CORRECT, causal="none"), lse_pass=True)),
            ("causal-mask-missing", FlashVariant(base=replace(CORRECT, causal="none"), causal_blocks=ALL_BLOCKS, lse_pass=True)),
            ("k-v-swapped", FlashVariant(base=replace(CORRECT, order=(0, 2, 1)))),
        )


TASK = FlashTask()
