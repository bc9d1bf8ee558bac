"""The ``alibi`` task: ``alibi_attention(q, k, v, causal=True)``, attention with linear biases (Press et al. 2022).

scores = q k^T / sqrt(D) - m_h * |i - j|, with the head slopes of the paper's code: for H a power
of two the geometric sequence m_h = 2^(-8h/H), h = 1..H; otherwise the slopes of the closest power
of two below H, then every other slope of twice that many heads for the rest. With causal=True the
bias is -m_h * (i - j) on j <= i, which equals m_h * j up to a per-row constant, so BLOOM's
key-position form is accepted there (softmax cannot tell them apart).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import deterministic_check, dtype_id, gradient_verdict, large_logits_verdict, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev


@dataclass(frozen=True)
class AlibiVariant:
    slopes: str = "paper"  # paper | reversed | naive (2^(-8h/H) for any H) | sorted | next-pow2 (first H of 2^ceil)
    #                        odd (the rest from every other slope of 2n heads, starting at the 2nd)
    first: int = 1  # the exponent h of the first head in 2^(-8h/n): 0 or 2 is the off-by-one, under any rule above
    rest_first: int | None = None  # the same for the slopes taken from 2n heads (None: as first; 1: the base alone off)
    sign: int = -1  # +1: the bias rewards distance
    distance: str = "relative"  # relative |i - j| | key: -m * j (the key's absolute position) | key-plus: +m * j
    scale: str = "sqrt"  # sqrt | none | d
    mask: bool = True  # False: causal=True builds no mask


CORRECT = AlibiVariant()


def _geometric(n: int, first: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)
    return [start ** (h + first) for h in range(n)]


def alibi_slopes(n: int, rule: str = "paper", first: int = 1, rest_first: int | None = None) -> list[float]:
    """The head slopes, by the paper's rule or one of the classic mistakes (``first``: the base's off-by-one, and
    that of the rest too unless ``rest_first`` says otherwise)."""
    if rule == "naive" or math.log2(n).is_integer():
        slopes = _geometric(n, first)
    else:
        closest = 2 ** math.floor(math.log2(n))
        if rule == "next-pow2":
            slopes = _geometric(2 * closest, first)[:n]
        else:
            rest = alibi_slopes(2 * closest, first=first if rest_first is None else rest_first)[int(rule == "odd") :: 2]
            slopes = _geometric(closest, first) + rest[: n - closest]
        if rule == "sorted":
            slopes = sorted(slopes, reverse=True)
    return slopes[::-1] if rule == "reversed" else slopes


def reference(q, k, v, causal: bool, variant=CORRECT, dtype=torch.float64):
    """In ``dtype`` with a hand-written softmax, as a candidate computes it (the baseline of the tolerance rule)."""
    variant = variant if isinstance(variant, AlibiVariant) else CORRECT  # the engine's baseline: the correct one
    q, k, v = (t.to(dtype) for t in (q, k, v))
    h, t, d = q.shape[-3:]
    slopes = alibi_slopes(h, variant.slopes, variant.first, variant.rest_first)
    m = torch.tensor(slopes, dtype=dtype, device=q.device)[:, None, None]
    i = torch.arange(t, device=q.device)[:, None]
    j = torch.arange(t, device=q.device)[None, :]
    distance = {"relative": (i - j).abs(), "key": j.expand(t, t), "key-plus": -j.expand(t, t)}[variant.distance].to(dtype)
    scale = {"sqrt": 1 / math.sqrt(d), "none": 1.0, "d": 1 / d}[variant.scale]
    scores = q @ k.transpose(-2, -1) * scale + variant.sign * m * distance
    if causal and variant.mask:
        scores = scores.masked_fill(j > i, float("-inf"))
    e = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True) @ v


def run(ctx: Context, q, k, v, causal: bool | None):
    out = ctx.call(ctx.entry, q, k, v) if causal is None else ctx.call(ctx.entry, q, k, v, causal=causal)
    return unpack(out)[0]


def qkv(ctx: Context, b: int, h: int, t: int, d: int, dv: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    return tuple(ctx.randn(b, h, t, e, gen=gen, dtype=dtype) for e in (d, d, dv))


def versus_truth(label, out, q, k, v, causal, dtype):
    return against_truth([(label, out, reference(q, k, v, causal), reference(q, k, v, causal, dtype=dtype))])


# (id, B, H, T, D, Dv, causal): B, H, T and D never coincide; None = causal left at its default.
SHAPE_CASES = (
    ("shape.base", 2, 4, 7, 6, 6, None),
    ("shape.bidirectional", 2, 4, 7, 6, 6, False),
    ("shape.dv", 2, 4, 7, 6, 5, True),
    ("shape.t1", 2, 4, 1, 6, 6, True),
    ("shape.one-head", 3, 1, 7, 6, 6, True),
)
# (H, causal): powers of two, and H = 6 and 12 where the paper's rule for other head counts applies.
NUMERICAL_CASES = ((8, True), (8, False), (4, True), (6, True), (12, False), (1, True))


def shape_check(ctx: Context, b, h, t, d, dv, causal):
    q, k, v = qkv(ctx, b, h, t, d, dv, 1, torch.float32)
    out = run(ctx, q, k, v, causal)
    problem = expect_like(out, (b, h, t, dv), q)
    if problem:
        return outcome("fail", problem)
    if causal is None:  # the default must be causal=True
        return versus_truth(Ev("output with causal left at its default (True)"), out, q.double(), k.double(), v.double(), True, torch.float32)
    return outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def numerical_check(ctx: Context, h: int, causal: bool, dtype, offset: int):
    q, k, v = qkv(ctx, 2, h, 9, 8, 6, 100 + offset)
    out = run(ctx, q.to(dtype), k.to(dtype), v.to(dtype), causal)
    slopes = ", ".join(f"{s:g}" for s in alibi_slopes(h)[:4]) + (", ..." if h > 4 else "")
    label = Ev("output (H={h}, slopes {slopes}, causal={causal}, {dtype})", h=h, slopes=slopes, causal=causal, dtype=str(dtype)[6:])
    return versus_truth(label, out, q, k, v, causal, dtype)


def drawn_shape(ctx: Context) -> tuple[int, ...]:
    """B, H, T, D, Dv drawn from the seed, all distinct; H neither a power of two, where the paper's slope rule is
    subtle, nor a fixed case's head count (a table of slopes for those, or a bias built for T=9, fails here)."""
    fixed = {h for h, _ in NUMERICAL_CASES}
    for offset in range(300, 400):
        b, h, t, d, dv = ctx.sizes(offset, (1, 3), (3, 15), (2, 20), (2, 16), (2, 16))
        if not math.log2(h).is_integer() and h not in fixed:
            return b, h, t, d, dv
    raise ValueError("no head count drawn outside the fixed cases")


def drawn_check(ctx: Context):
    """One call at a shape drawn from the seed, causal or not as the seed says (float32)."""
    b, h, t, d, dv = drawn_shape(ctx)
    causal = bool(torch.randint(2, (), generator=ctx.generator(131)))
    q, k, v = qkv(ctx, b, h, t, d, dv, 130)
    where = Ev("B={b}, H={h}, T={t}, D={d}, Dv={dv}, causal={causal}", b=b, h=h, t=t, d=d, dv=dv, causal=causal)
    out = run(ctx, q.float(), k.float(), v.float(), causal)
    result = versus_truth(Ev("output ({where}, drawn from the seed)", where=where), out, q, k, v, causal, torch.float32)
    if result.status == "pass":
        result.message = Ev("{what} ({where}, drawn from the seed)", what=result.message, where=where)
    return result


def long_sequence_check(ctx: Context):
    """T = 200: the first head's bias reaches -0.25 * 199; the softmax must stay stable."""
    q, k, v = qkv(ctx, 1, 4, 200, 8, 8, 150)
    out = run(ctx, q.float(), k.float(), v.float(), True)
    return versus_truth(Ev("output (H=4, T=200, causal)"), out, q, k, v, True, torch.float32)


def gradient_check(ctx: Context, dtype):
    base = qkv(ctx, 2, 6, 9, 8, 6, 200)
    expected = (2, 6, 9, 6)

    def user(*leaves):
        out = run(ctx, *leaves, True)
        expect_shape(out, expected)
        return out

    return gradient_verdict(ctx, base, dtype, user, lambda *t: reference(*t[:3], True, dtype=t[3]), label=Ev(" (H=6, causal)"))


def future_leak_check(ctx: Context):
    q, k, v = qkv(ctx, 2, 4, 8, 4, 4, 300)
    base = run(ctx, q, k, v, True)
    expect_shape(base, q.shape)
    for j in range(1, 8):
        k2, v2 = k.clone(), v.clone()
        k2[..., j, :] += 3.0
        v2[..., j, :] += 3.0
        change = moved(run(ctx, q, k2, v2, True), base).amax(dim=(0, 1))
        early = change[:j]
        if (early > LEAK_THRESHOLD).any():
            i = int((early > LEAK_THRESHOLD).nonzero()[0])
            return outcome("fail", Ev("causal=True: position {i} changes when future key {j} changes", i=i, j=j))
    return outcome("pass", Ev("causal=True (float64): perturbing future keys never moves earlier outputs"))


def large_logits_check(ctx: Context):
    q, k, v = qkv(ctx, 2, 4, 9, 8, 6, 400)
    big_q, big_k = 31.6 * q, 31.6 * k
    return large_logits_verdict(run(ctx, big_q, big_k, v, True), reference(big_q, big_k, v, True), lambda: run(ctx, q, k, v, True))


def varying_check(ctx: Context):
    for n, (h, t, causal) in enumerate(((8, 9, True), (6, 5, False), (4, 12, True))):
        q, k, v = qkv(ctx, 2, h, t, 8, 6, 500 + n, torch.float32)
        label = Ev("call {n} (H={h}, T={t}, causal={causal})", n=n + 1, h=h, t=t, causal=causal)
        result = versus_truth(label, run(ctx, q, k, v, causal), q, k, v, causal, torch.float32)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different H, T and causal in a row all match (no stale cached slopes or bias)"))


@dataclass(frozen=True)
class Probe:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    causal: bool

    def user(self, ctx: Context):
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.causal)

    def expected(self, variant):
        return reference(self.q, self.k, self.v, self.causal, variant)


class AlibiTask:
    name = "alibi"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [
                CheckDef(f"{prefix}.h{h}" + (".causal" if causal else ".bidirectional"), "numerical",
                         partial(numerical_check, ctx, h, causal, dtype, n))  # fmt: skip
                for n, (h, causal) in enumerate(NUMERICAL_CASES)
            ]
            if dtype == torch.float32:
                defs.append(CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)))
            grad_id = dtype_id("gradient", dtype, "gradient.qkv")
            defs.append(CheckDef(grad_id, "gradient", partial(gradient_check, ctx, dtype)))
        q, k, v = qkv(ctx, 2, 4, 9, 8, 6, 600, torch.float32)
        defs += [
            CheckDef("mask-leak.future", "mask-leak", partial(future_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("stability.long-sequence", "stability", partial(long_sequence_check, ctx)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: run(ctx, q, k, v, True), {"q": q, "k": k, "v": v}),
            ),
            CheckDef(
                "robustness.deterministic",
                "robustness",
                partial(deterministic_check, lambda: run(ctx, q.clone(), k.clone(), v.clone(), True)),
            ),
            CheckDef("robustness.varying-heads", "robustness", partial(varying_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        found = []
        for n, h in enumerate((8, 6, 12)):
            q, k, v = qkv(ctx, 1, h, 8, 4, 4, 1100 + n)
            found += [Probe(q, k, v, True), Probe(q, k, v, False)]
        return found

    def hypotheses(self, ctx: Context):
        return (
            ("alibi-slopes-reversed", AlibiVariant(slopes="reversed")),
            ("alibi-slopes-non-power-of-two", AlibiVariant(slopes="naive")),
            ("alibi-slopes-non-power-of-two", AlibiVariant(slopes="sorted")),
            ("alibi-slopes-non-power-of-two", AlibiVariant(slopes="next-pow2")),
            ("alibi-slopes-non-power-of-two", AlibiVariant(slopes="odd")),
            # The base off by one, whether written for every H or inside the paper's rule for other head counts.
            ("alibi-slopes-off-by-one", AlibiVariant(slopes="naive", first=0)),
            ("alibi-slopes-off-by-one", AlibiVariant(first=0)),
            ("alibi-slopes-off-by-one", AlibiVariant(first=2)),
            # ... or only in the power-of-two helper, the rest written out right (2^(-8h/2n), h = 1, 3, 5, ...).
            ("alibi-slopes-off-by-one", AlibiVariant(first=0, rest_first=1)),
            ("alibi-slopes-off-by-one", AlibiVariant(first=2, rest_first=1)),
            ("alibi-positive-bias", AlibiVariant(sign=1)),
            ("alibi-absolute-distance", AlibiVariant(distance="key")),
            ("alibi-absolute-distance", AlibiVariant(distance="key-plus")),
            ("causal-mask-missing", AlibiVariant(mask=False)),
            ("scale-missing", AlibiVariant(scale="none")),
            ("scale-by-d", AlibiVariant(scale="d")),
        )


TASK = AlibiTask()
