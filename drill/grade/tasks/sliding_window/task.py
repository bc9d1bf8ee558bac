"""The ``sliding_window`` task: ``sliding_window_attention(q, k, v, window)``, causal local attention.

Query i attends keys j with i - window < j <= i: the last ``window`` positions, itself included
(Mistral 7B's convention; Longformer's window is two-sided). The window's edges are where the
bugs are, so every leak check names the (query, key) pair it caught.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.common import deterministic_check, dtype_id, gradient_verdict, large_logits_verdict, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, same_output, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.reference import CORRECT, Variant, scale_factor
from drill.text.messages import Ev


@dataclass(frozen=True)
class WindowVariant:
    """Which keys a query sees (``edges``), on top of an attention mistake (``base``)."""

    edges: str = "causal"  # causal: i-W < j <= i | plus-one: i-W <= j <= i | minus-one: i-W+1 < j <= i
    #                        both: |i-j| < W | both-inclusive: |i-j| <= W | no-causal: j > i-W | no-window: j <= i
    base: Variant = CORRECT


def window_mask(t: int, window: int, edges: str = "causal", device=None) -> torch.Tensor:
    """Bool [T, T], True = may attend."""
    i = torch.arange(t, device=device)[:, None]
    j = torch.arange(t, device=device)[None, :]
    return {
        "causal": (j <= i) & (j > i - window),
        "plus-one": (j <= i) & (j >= i - window),
        "minus-one": (j <= i) & (j > i - window + 1),
        "both": (i - j).abs() < window,
        "both-inclusive": (i - j).abs() <= window,
        "no-causal": j > i - window,
        "no-window": j <= i,
    }[edges]


def reference(q, k, v, window: int, variant=CORRECT, dtype=torch.float64):
    """In ``dtype`` with a hand-written softmax, as a candidate computes it (the baseline of the tolerance rule)."""
    variant = variant if isinstance(variant, WindowVariant) else WindowVariant(base=variant)
    q, k, v = ((q, k, v)[i].to(dtype) for i in variant.base.order)
    scores = q @ k.transpose(-2, -1) * scale_factor(variant.base, q.shape[-1], None)
    dim = variant.base.softmax_dim
    # Over the heads a softmax meets slices that are all masked: -inf makes them NaN (no evidence left), -1e9, as most
    # candidates fill, averages them; over keys or queries the diagonal is always allowed, so both fills agree.
    fill = float("-inf") if dim == -1 else -1e9
    scores = scores.masked_fill(~window_mask(q.shape[-2], window, variant.edges, q.device), fill)
    e = (scores - scores.amax(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True) @ v


def run(ctx: Context, q, k, v, window: int):
    return unpack(ctx.call(ctx.entry, q, k, v, window))[0]


def qkv(ctx: Context, lead, t: int, d: int, dv: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    return tuple(ctx.randn(*lead, t, e, gen=gen, dtype=dtype) for e in (d, d, dv))


def versus_truth(label, out, q, k, v, window, dtype):
    return against_truth([(label, out, reference(q, k, v, window), reference(q, k, v, window, dtype=dtype))])


# (id, leading dims, T, D, Dv, window): B, H, T, D and window never coincide.
SHAPE_CASES = (
    ("shape.4d", (2, 3), 10, 8, 8, 4),
    ("shape.3d", (3,), 9, 4, 4, 2),
    ("shape.dv", (2, 3), 10, 8, 6, 4),
    ("shape.t1", (2, 3), 1, 8, 8, 4),
)
# (T, window): inside, only itself, exactly T (plain causal), wider than T, a small odd case.
NUMERICAL_CASES = ((12, 4), (12, 1), (12, 12), (12, 20), (7, 3))


def shape_check(ctx: Context, lead, t, d, dv, window):
    q, k, v = qkv(ctx, lead, t, d, dv, 1, torch.float32)
    out = run(ctx, q, k, v, window)
    problem = expect_like(out, (*lead, t, dv), q)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} (window={window})", shape=list(out.shape), window=window))


def non_contiguous_check(ctx: Context):
    q, k, v = (t.transpose(1, 2) for t in qkv(ctx, (2, 10), 3, 8, 8, 2, torch.float32))
    out = run(ctx, q, k, v, 4)
    expect_shape(out, q.shape)
    again = run(ctx, q.contiguous(), k.contiguous(), v.contiguous(), 4)
    if not same_output(out, again, 1e-5):
        return outcome("fail", Ev("non-contiguous inputs give a different output than their contiguous copies"))
    return outcome("pass", Ev("output {shape} from transposed inputs", shape=list(out.shape)))


def numerical_check(ctx: Context, t: int, window: int, dtype, offset: int):
    q, k, v = qkv(ctx, (2, 3), t, 8, 6, 100 + offset)
    out = run(ctx, q.to(dtype), k.to(dtype), v.to(dtype), window)
    return versus_truth(Ev("output (T={t}, window={window}, {dtype})", t=t, window=window, dtype=str(dtype)[6:]), out, q, k, v, window, dtype)


def drawn_check(ctx: Context):
    """B, H, T, D, Dv and the window drawn from the seed (no size is 8, the head dim of every fixed numerical
    case), float32; the window may exceed T, as the contract allows."""
    b, h, t, d, dv, window = ctx.sizes(130, (1, 3), (1, 5), (6, 24), (2, 16), (2, 16), (1, 12), avoid=(8,))
    q, k, v = qkv(ctx, (b, h), t, d, dv, 130)
    where = Ev("B={b}, H={h}, T={t}, D={d}, Dv={dv}, window={window}, drawn from the seed", b=b, h=h, t=t, d=d, dv=dv, window=window)
    out = run(ctx, q.float(), k.float(), v.float(), window)
    result = versus_truth(Ev("output ({where})", where=where), out, q, k, v, window, torch.float32)
    if result.status == "pass":
        result.message = Ev("{what} ({where})", what=result.message, where=where)
    return result


def gradient_check(ctx: Context, dtype):
    base = qkv(ctx, (2, 3), 11, 8, 6, 200)
    expected = (2, 3, 11, 6)

    def user(*leaves):
        out = run(ctx, *leaves, 3)
        expect_shape(out, expected)
        return out

    label = Ev(" (T={t}, window={window})", t=11, window=3)
    return gradient_verdict(ctx, base, dtype, user, lambda *t: reference(*t[:3], 3, dtype=t[3]), label=label)


def window_leak_check(ctx: Context):
    """float64: perturbing key/value j must move output i exactly when i - window < j <= i."""
    t, window = 10, 3
    q, k, v = qkv(ctx, (2, 1), t, 4, 4, 300)
    base = run(ctx, q, k, v, window)
    expect_shape(base, q.shape)
    allowed = window_mask(t, window)
    gen = ctx.generator(301)
    for j in range(t):
        k2, v2 = k.clone(), v.clone()
        k2[..., j, :] += 3 * ctx.randn(4, gen=gen, dtype=torch.float64)
        v2[..., j, :] += 3 * ctx.randn(4, gen=gen, dtype=torch.float64)
        change = moved(run(ctx, q, k2, v2, window), base).amax(dim=(0, 1))  # [T]
        for i in range(t):
            if not allowed[i, j] and change[i] > LEAK_THRESHOLD:
                where = Ev("a future key") if j > i else Ev("a key {n} positions back, outside the window", n=i - j)
                return outcome("fail", Ev("window={window}: query {i} sees key {j} ({where}; it may see {first}..{i})",
                                          window=window, i=i, j=j, where=where, first=max(0, i - window + 1)))  # fmt: skip
            if allowed[i, j] and change[i] <= LEAK_THRESHOLD:
                return outcome("fail", Ev("window={window}: query {i} does not see key {j}, inside its window {first}..{i}",
                                          window=window, i=i, j=j, first=max(0, i - window + 1)))  # fmt: skip
    return outcome("pass", Ev("window={window}, T={t} (float64): query i sees exactly keys i-{back}..i", window=window, t=t, back=window - 1))


def query_leak_check(ctx: Context):
    """float64: perturbing query i moves output i only."""
    q, k, v = qkv(ctx, (2, 1), 8, 4, 4, 350)
    base = run(ctx, q, k, v, 3)
    expect_shape(base, q.shape)
    for i in range(8):
        q2 = q.clone()
        q2[..., i, :] += 3.0
        change = moved(run(ctx, q2, k, v, 3), base).amax(dim=(0, 1))
        change[i] = 0
        if (change > LEAK_THRESHOLD).any():
            return outcome("fail", Ev("changing query {i} moves the output of position {j}", i=i, j=int(change.argmax())))
    return outcome("pass", Ev("changing query i moves output i only"))


def large_logits_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 3), 12, 8, 6, 400)
    big_q, big_k = 31.6 * q, 31.6 * k
    return large_logits_verdict(run(ctx, big_q, big_k, v, 4), reference(big_q, big_k, v, 4), lambda: run(ctx, q, k, v, 4))


def varying_check(ctx: Context):
    for n, (t, window) in enumerate(((12, 4), (7, 2), (9, 9))):
        q, k, v = qkv(ctx, (2, 3), t, 8, 6, 500 + n, torch.float32)
        label = Ev("call {n} (T={t}, window={window})", n=n + 1, t=t, window=window)
        result = versus_truth(label, run(ctx, q, k, v, window), q, k, v, window, torch.float32)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different T and window in a row all match"))


@dataclass(frozen=True)
class Probe:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    window: int

    def user(self, ctx: Context):
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.window)

    def expected(self, variant):
        return reference(self.q, self.k, self.v, self.window, variant)


class SlidingWindowTask:
    name = "sliding_window"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        defs.append(CheckDef("shape.non-contiguous", "shape", partial(non_contiguous_check, ctx)))
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [
                CheckDef(f"{prefix}.t{t}-window{w}", "numerical", partial(numerical_check, ctx, t, w, dtype, n))
                for n, (t, w) in enumerate(NUMERICAL_CASES)
            ]
            if dtype == torch.float32:
                defs.append(CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)))
            grad_id = dtype_id("gradient", dtype, "gradient.qkv")
            defs.append(CheckDef(grad_id, "gradient", partial(gradient_check, ctx, dtype)))
        q, k, v = qkv(ctx, (2, 3), 12, 8, 6, 600, torch.float32)
        defs += [
            CheckDef("mask-leak.window", "mask-leak", partial(window_leak_check, ctx)),
            CheckDef("mask-leak.queries", "mask-leak", partial(query_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
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
            CheckDef("robustness.varying-window", "robustness", partial(varying_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        q, k, v = qkv(ctx, (2, 2), 9, 4, 4, 1100)
        return [Probe(q, k, v, 3), Probe(q, k, v, 5)]

    def hypotheses(self, ctx: Context):
        return (
            ("sliding-window-off-by-one", WindowVariant(edges="plus-one")),
            ("sliding-window-off-by-one", WindowVariant(edges="minus-one")),
            ("sliding-window-both-sides", WindowVariant(edges="both")),
            ("sliding-window-both-sides", WindowVariant(edges="both-inclusive")),
            ("sliding-window-causal-missing", WindowVariant(edges="no-causal")),
            ("sliding-window-missing", WindowVariant(edges="no-window")),
            ("scale-missing", WindowVariant(base=replace(CORRECT, scale="none"))),
            ("scale-by-d", WindowVariant(base=replace(CORRECT, scale="d"))),
            ("softmax-wrong-dim", WindowVariant(base=replace(CORRECT, softmax_dim=-2))),
            ("softmax-wrong-dim", WindowVariant(base=replace(CORRECT, softmax_dim=1))),  # over the heads of [B, H, T, T]
            ("k-v-swapped", WindowVariant(base=replace(CORRECT, order=(0, 2, 1)))),
        )


TASK = SlidingWindowTask()
