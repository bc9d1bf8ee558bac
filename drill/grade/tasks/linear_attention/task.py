"""The ``linear_attention`` task: ``linear_attention(q, k, v, causal=False, eps=1e-6)``, Katharopoulos et al. 2020.

out_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps) with phi(x) = elu(x) + 1, S_i = sum_j phi(k_j) v_j^T and
z_i = sum_j phi(k_j) over all j, or over j <= i when causal (prefix sums). No 1/sqrt(D) scale. The
point is the cost: the call must never build a tensor that grows as T^2 (drill.grade.user.spy.LargestTensor
sees every tensor any aten op produces); prefix-sum states of T * D * Dv elements are fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import deterministic_check, dtype_id, gradient_verdict, jacobian_check, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev


@dataclass(frozen=True)
class LinearVariant:
    phi: str = "elu+1"  # elu+1 | identity (phi missing) | elu (without the +1)
    normalise: bool = True
    prefix: str = "inclusive"  # inclusive: j <= i | exclusive: j < i | none: causal ignored
    eps: str = "given"  # given | ignored (always 1e-6)


CORRECT = LinearVariant()
# The memory rule: T is large against D * Dv, so prefix-sum states (H * T * D * Dv = 8 192) stay far below T * T = 65 536.
MEMORY = (1, 2, 256, 4, 4)  # B, H, T, D, Dv


def feature_map(x, phi: str):
    return {"elu+1": lambda: F.elu(x) + 1, "identity": lambda: x, "elu": lambda: F.elu(x)}[phi]()


def reference(q, k, v, causal: bool, eps: float = 1e-6, variant=CORRECT, dtype=torch.float64):
    """Prefix sums in ``dtype`` (the route an O(T) implementation takes), with the mistake ``variant`` models."""
    variant = variant if isinstance(variant, LinearVariant) else CORRECT  # the engine's baseline: the correct one
    q, k, v = (t.to(dtype) for t in (q, k, v))
    fq, fk = feature_map(q, variant.phi), feature_map(k, variant.phi)
    if causal and variant.prefix != "none":
        kv = torch.einsum("...td,...te->...tde", fk, v)
        state, z = kv.cumsum(dim=-3), fk.cumsum(dim=-2)
        if variant.prefix == "exclusive":
            state, z = state - kv, z - fk
        num = torch.einsum("...td,...tde->...te", fq, state)
        den = (fq * z).sum(dim=-1)
    else:
        num = fq @ (fk.transpose(-2, -1) @ v)
        den = fq @ fk.sum(dim=-2)[..., None]
        den = den[..., 0]
    if not variant.normalise:
        return num
    return num / (den[..., None] + (1e-6 if variant.eps == "ignored" else eps))


def run(ctx: Context, q, k, v, causal: bool, eps: float | None = None):
    kwargs = {"causal": causal} if eps is None else {"causal": causal, "eps": eps}
    return unpack(ctx.call(ctx.entry, q, k, v, **kwargs))[0]


def qkv(ctx: Context, lead, t: int, d: int, dv: int, offset: int, dtype=torch.float64):
    gen = ctx.generator(offset)
    return tuple(ctx.randn(*lead, t, e, gen=gen, dtype=dtype) for e in (d, d, dv))


def versus_truth(label, out, q, k, v, causal, dtype, eps: float = 1e-6):
    return against_truth([(label, out, reference(q, k, v, causal, eps), reference(q, k, v, causal, eps, dtype=dtype))])


# (id, leading dims, T, D, Dv, causal): leading dims, T, D and Dv never coincide.
SHAPE_CASES = (
    ("shape.4d", (2, 3), 10, 8, 8, False),
    ("shape.causal", (2, 3), 10, 8, 8, True),
    ("shape.3d", (3,), 9, 4, 4, True),
    ("shape.dv", (2, 3), 10, 8, 6, True),
    ("shape.t1", (2, 3), 1, 8, 8, True),
)


def shape_check(ctx: Context, lead, t, d, dv, causal):
    q, k, v = qkv(ctx, lead, t, d, dv, 1, torch.float32)
    out = run(ctx, q, k, v, causal)
    problem = expect_like(out, (*lead, t, dv), q)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} (causal={causal})", shape=list(out.shape), causal=causal))


def numerical_check(ctx: Context, causal: bool, dtype, offset: int):
    q, k, v = qkv(ctx, (2, 3), 12, 8, 6, 100 + offset)
    out = run(ctx, q.to(dtype), k.to(dtype), v.to(dtype), causal)
    return versus_truth(Ev("output (T=12, causal={causal}, {dtype})", causal=causal, dtype=str(dtype)[6:]), out, q, k, v, causal, dtype)


def drawn_check(ctx: Context):
    """B, H, T, D and Dv drawn from the seed (the fixed checks use D 8 or 4, Dv 6 or 4), causal and not, with the
    leading dims (B, H) and (B * H,): every other numerical check passes 4-D inputs, where a hard-coded axis 2 is T."""
    b, h, t, d, dv = ctx.sizes(320, (1, 4), (1, 5), (5, 24), (2, 11), (2, 11), avoid=(4, 6, 8, 12))
    pairs = []
    for lead in ((b, h), (b * h,)):
        q, k, v = (z.reshape(*lead, t, z.shape[-1]) for z in qkv(ctx, (b, h), t, d, dv, 130))
        for causal in (False, True):
            out = run(ctx, q.float(), k.float(), v.float(), causal)
            truth, same = reference(q, k, v, causal), reference(q, k, v, causal, dtype=torch.float32)
            pairs.append((Ev("output {shape} (causal={causal})", shape=[*lead, t, dv], causal=causal), out, truth, same))
    result = against_truth(pairs)
    result.message = Ev("B={b}, H={h}, T={t}, D={d}, Dv={dv} (drawn from the seed): {what}", b=b, h=h, t=t, d=d, dv=dv, what=result.message)
    return result


def eps_check(ctx: Context):
    """eps = 0.5 and 2.0: the value passed must be the one added to the normaliser."""
    q, k, v = qkv(ctx, (2, 3), 9, 4, 6, 150)
    for n, (causal, eps) in enumerate(((True, 0.5), (False, 2.0))):
        out = run(ctx, q.float(), k.float(), v.float(), causal, eps)
        result = versus_truth(Ev("output (eps={eps}, causal={causal})", eps=eps, causal=causal), out, q, k, v, causal, torch.float32, eps)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("eps = 0.5 (causal) and 2.0 (not) are added to the normaliser"))


def gradient_check(ctx: Context, dtype):
    base = qkv(ctx, (2, 3), 10, 8, 6, 200)
    expected = (2, 3, 10, 6)

    def user(*leaves):
        out = run(ctx, *leaves, True)
        expect_shape(out, expected)
        return out

    return gradient_verdict(ctx, base, dtype, user, lambda *t: reference(*t[:3], True, dtype=t[3]), label=Ev(" (T=10, causal)"))


def memory_check(ctx: Context):
    b, h, t, d, dv = MEMORY
    limit = t * t
    peaks = []
    for causal in (False, True):
        q, k, v = qkv(ctx, (b, h), t, d, dv, 300 + causal, torch.float32)
        _, (size, shape, op) = ctx.largest(ctx.entry, q, k, v, causal=causal)
        if size >= limit:
            return outcome(
                "fail",
                Ev("causal={causal}: {op} produced a tensor of shape {shape} ({size} elements), "
                   "at least T x T = {limit} with T={t}, D={d}, Dv={dv}: that is quadratic attention",
                   causal=causal, op=op, shape=list(shape), size=size, limit=limit, t=t, d=d, dv=dv),
                "linear-attention-quadratic",
            )
        peaks.append(size)
    return outcome("pass", Ev("T={t}, D={d}, Dv={dv}: largest tensor {size} elements (< {limit} = T x T)",
                              t=t, d=d, dv=dv, size=max(peaks), limit=limit))  # fmt: skip


def future_leak_check(ctx: Context):
    q, k, v = qkv(ctx, (2, 1), 10, 4, 4, 400)
    base = run(ctx, q, k, v, True)
    expect_shape(base, q.shape)
    for j in range(1, 10):
        k2, v2 = k.clone(), v.clone()
        k2[..., j, :] += 3.0
        v2[..., j, :] += 3.0
        early = moved(run(ctx, q, k2, v2, True), base).amax(dim=(0, 1))[:j]
        if (early > LEAK_THRESHOLD).any():
            i = int((early > LEAK_THRESHOLD).nonzero()[0])
            return outcome("fail", Ev("causal=True: position {i} changes when future key/value {j} changes", i=i, j=j))
    return outcome("pass", Ev("causal=True (float64): perturbing future keys and values never moves earlier outputs"))


def linear_jacobian_check(ctx: Context):
    x = ctx.randn(2, 6, 4, gen=ctx.generator(500), dtype=torch.float64).requires_grad_()
    return jacobian_check(ctx, lambda z: run(ctx, z[:, None], z[:, None], z[:, None], True)[:, 0], x)


def large_inputs_check(ctx: Context):
    """q, k and v scaled by 30: phi grows linearly, the sums reach ~1e4; the result must stay within the rule."""
    q, k, v = (30 * t for t in qkv(ctx, (2, 3), 40, 8, 6, 600))
    pairs = []
    for causal in (False, True):
        out = run(ctx, q.float(), k.float(), v.float(), causal)
        label = Ev("inputs x30 (causal={causal})", causal=causal)
        pairs.append((label, out, reference(q, k, v, causal), reference(q, k, v, causal, dtype=torch.float32)))
    return against_truth(pairs)


def varying_check(ctx: Context):
    for n, (t, causal) in enumerate(((12, True), (5, False), (9, True))):
        q, k, v = qkv(ctx, (2, 3), t, 8, 6, 700 + n, torch.float32)
        label = Ev("call {n} (T={t}, causal={causal})", n=n + 1, t=t, causal=causal)
        result = versus_truth(label, run(ctx, q, k, v, causal), q, k, v, causal, torch.float32)
        if result.status != "pass":
            return result
    return outcome("pass", Ev("three calls with different T and causal in a row all match"))


@dataclass(frozen=True)
class Probe:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    causal: bool
    eps: float

    def user(self, ctx: Context):
        return run(ctx, self.q.clone(), self.k.clone(), self.v.clone(), self.causal, self.eps)

    def expected(self, variant):
        return reference(self.q, self.k, self.v, self.causal, self.eps, variant)


class LinearAttentionTask:
    name = "linear_attention"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, *case[1:])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [
                CheckDef(f"{prefix}.{'causal' if causal else 'full'}", "numerical", partial(numerical_check, ctx, causal, dtype, causal))
                for causal in (False, True)
            ]
            grad_id = dtype_id("gradient", dtype, "gradient.qkv")
            defs.append(CheckDef(grad_id, "gradient", partial(gradient_check, ctx, dtype)))
        q, k, v = qkv(ctx, (2, 3), 12, 8, 6, 800, torch.float32)
        defs += [
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.eps", "numerical", partial(eps_check, ctx)),
            CheckDef("rules.no-quadratic", "rules", partial(memory_check, ctx)),
            CheckDef("mask-leak.future", "mask-leak", partial(future_leak_check, ctx)),
            CheckDef("mask-leak.jacobian", "mask-leak", partial(linear_jacobian_check, ctx)),
            CheckDef("stability.large-inputs", "stability", partial(large_inputs_check, ctx)),
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
            CheckDef("robustness.varying-length", "robustness", partial(varying_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        q, k, v = qkv(ctx, (1, 2), 10, 4, 5, 1100)
        return [Probe(q, k, v, causal, eps) for causal in (False, True) for eps in (1e-6, 0.5)]

    def hypotheses(self, ctx: Context):
        return (
            ("linear-attention-phi-missing", LinearVariant(phi="identity")),
            ("linear-attention-elu-without-one", LinearVariant(phi="elu")),
            ("linear-attention-normaliser-missing", LinearVariant(normalise=False)),
            ("linear-attention-causal-exclusive", LinearVariant(prefix="exclusive")),
            ("linear-attention-causal-ignored", LinearVariant(prefix="none")),
            ("linear-attention-eps-ignored", LinearVariant(eps="ignored")),
        )


TASK = LinearAttentionTask()
