"""The ``triton_flash_attention`` task: ``flash_attention(q, k, v, causal=False, sm_scale=None) -> (o, lse)``,
FlashAttention's forward as a Triton kernel over ``[B, H, T, D]``.

One program per (query block, batch * head) walks the key blocks with an online softmax: a running
row max m, a running sum l of exp(s - m) and an accumulator, both rescaled by exp(m_old - m_new)
when the max grows. Its classic bugs hide on ordinary inputs: a forgotten rescale is right while the
first key block holds every row's max, a causal mask applied per tile is right when T fits one tile,
a layout taken to be contiguous is right on contiguous q, k, v. Each gets the input that exposes it,
and the per-tile and rescale bugs are named by building them in float64 at the usual block sizes
(16 to 128) and finding the one the user's output equals. On CPU the kernel runs under Triton's
interpreter, inside guard bands (drill/grade/checks/kernels.py); shapes stay tiny because it is slow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, first_nonfinite
from drill.grade.checks.kernels import Launches, OutOfBounds, guarded, launch
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.kernel_bench import Case, KernelBench
from drill.grade.user.wire import Strided
from drill.text.messages import Ev

FORBIDDEN = {
    "softmax": "softmax (torch.softmax, F.softmax, Tensor.softmax)",  # shown as is: names
    "_softmax": "torch._softmax",
    "_safe_softmax": "torch._safe_softmax",
    "log_softmax": "log_softmax",
    "exp": Ev("torch.exp (the kernel computes it, not the launcher)"),  # the rule shows it (battery.rules_check)
    "logsumexp": "torch.logsumexp",
    "matmul": "torch.matmul / @",
    "__matmul__": "@",
    "__rmatmul__": "@",
    "mm": "torch.mm",
    "bmm": "torch.bmm",
    "baddbmm": "torch.baddbmm",
    "einsum": "torch.einsum",
}
# (B, H, T, D, causal): T of 1, 17, 127, 129 is no multiple of a block; 129 passes 128 by one key. B * H stays 1
# where heads add nothing: the interpreter pays per program.
EDGE_CASES = ((2, 1, 1, 16, False), (1, 2, 17, 16, False), (1, 1, 127, 32, False), (1, 1, 129, 16, False))
CAUSAL_CASES = ((1, 1, 17, 16, True), (1, 1, 129, 32, True))
HEAD_DIM_64 = (1, 1, 40, 64, True)
DIVISIBLE = (1, 1, 128, 16, False)  # T a multiple of every block: two or more key blocks below 128
BLOCKS = (16, 32, 64, 128)  # the block sizes a kernel writer picks: the diagnosis tries each
FUTURE_FROM = 9  # keys from 9 on change: any tile of 2 or more query rows that includes a row < 9 sees one
LOG2E = 1 / math.log(2)


def attention(q, k, v, visible, scale: float):
    """(o, lse) of softmax(q k^T * scale) v over the keys ``visible`` [Tq, Tk] lets each query see."""
    s = (q @ k.transpose(-2, -1) * scale).masked_fill(~visible, float("-inf"))
    lse = s.logsumexp(-1)
    return (s - lse[..., None]).exp() @ v, lse


def causal_visible(t: int, causal: bool) -> torch.Tensor:
    keys = torch.arange(t)
    return keys[None, :] <= keys[:, None] if causal else torch.ones(t, t, dtype=torch.bool)


def scale_of(q, sm_scale):
    return 1 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale


def truth_of(q, k, v, causal: bool, sm_scale=None):
    """((o, lse) in float64, (o, lse) in the inputs' precision: float32 math rounded to it)."""
    visible, scale = causal_visible(q.shape[-2], causal), scale_of(q, sm_scale)
    o64, lse64 = attention(q.double(), k.double(), v.double(), visible, scale)
    o32, lse32 = attention(q.float(), k.float(), v.float(), visible, scale)
    return (o64, lse64), (o32.to(q.dtype), lse32)


@dataclass(frozen=True)
class KernelVariant:
    """A kernel's tiling mistake at the block sizes it would have (0: no tiling involved)."""

    rescale: str = "both"  # | none: neither l nor acc rescaled | sum-only: acc not | acc-only: l not
    causal: str = "position"  # | tile: key blocks up to the diagonal kept whole, no mask inside | none: no mask
    block_m: int = 0
    block_n: int = 0


def tiled(q, k, v, causal: bool, scale: float, variant: KernelVariant) -> torch.Tensor:
    """The kernel's output in float64 with the mistake ``variant`` models."""
    t = q.shape[-2]
    keys, rows = torch.arange(t), torch.arange(t)
    if not causal or variant.causal == "none":
        visible = torch.ones(t, t, dtype=torch.bool)
    elif variant.causal == "tile":  # the loop runs to the end of the query block, rounded up to whole key blocks
        end = ((rows // variant.block_m + 1) * variant.block_m + variant.block_n - 1) // variant.block_n * variant.block_n
        visible = keys[None, :] < end[:, None]
    else:
        visible = keys[None, :] <= rows[:, None]
    if variant.rescale == "both":
        return attention(q, k, v, visible, scale)[0]
    m = q.new_full(q.shape[:-1], float("-inf"))
    l, acc = torch.zeros_like(m), torch.zeros_like(q[..., : v.shape[-1]])
    for start in range(0, t, variant.block_n):
        cols = slice(start, start + variant.block_n)
        s = (q @ k[..., cols, :].transpose(-2, -1) * scale).masked_fill(~visible[:, cols], float("-inf"))
        m_new = torch.maximum(m, s.amax(-1))
        alpha = torch.where(torch.isinf(m_new), 0.0, (m - m_new).exp())
        p = (s - m_new[..., None]).exp().nan_to_num(nan=0.0)
        l = (alpha * l if variant.rescale == "sum-only" else l) + p.sum(-1)
        acc = (alpha[..., None] * acc if variant.rescale == "acc-only" else acc) + p @ v[..., cols, :]
        m = m_new
    return acc / l[..., None]


def qkv(ctx: Context, offset: int, b, h, t, d, dtype=torch.float32):
    gen = ctx.generator(offset)
    return tuple(ctx.randn(b, h, t, d, gen=gen, dtype=torch.float64).to(dtype) for _ in range(3))


def outputs(ret, q) -> tuple[torch.Tensor, torch.Tensor]:
    """(o, lse) from the launcher's return, shapes and dtypes as the contract says."""
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(x, torch.Tensor) for x in ret)):
        raise WrongShape(Ev("returned {type}, not the pair (o, lse)", type=type(ret).__name__))
    o, lse = ret
    b, h, t, d = q.shape
    problem = expect_like(o, (b, h, t, d), q, "o")
    expect_like(lse, (b, h, t), lse, "lse")
    if problem is None and lse.dtype != torch.float32:
        problem = Ev("lse dtype is {dtype}, not torch.float32", dtype=str(lse.dtype))
    if problem:
        raise WrongShape(problem)
    return o, lse


def run(ctx: Context, q, k, v, causal: bool, sm_scale=None, like=None):
    """The user's (o, lse) on q, k, v (tensors, or Strided recipes of ``like``'s shape)."""
    kwargs = {"causal": causal} if sm_scale is None else {"causal": causal, "sm_scale": sm_scale}
    return outputs(launch(ctx, q, k, v, **kwargs), q if like is None else like)


def lse_hypotheses(lse, truth_lse, q, k, causal, sm_scale):
    """Why an lse is wrong while o is right (in log2 units, or without the row max), in words."""
    visible = causal_visible(q.shape[-2], causal)
    s = (q.double() @ k.double().transpose(-2, -1) * scale_of(q, sm_scale)).masked_fill(~visible, float("-inf"))
    for what, guess in ((LSE_LOG2, truth_lse * LOG2E), (LSE_NO_MAX, truth_lse - s.amax(-1))):
        if ((lse.double() - guess).abs() <= 1e-4 * guess.abs().clamp(min=1)).all():
            return what
    return None


LSE_LOG2 = Ev("o is right and lse equals the true one in log2 units (lse * log2(e)): lse = m + ln(l), the natural log")
LSE_NO_MAX = Ev("o is right and lse equals the true one without the row max (log of l alone): lse = m + ln(l), the natural log")


def verdict(label: Ev | str, got, q, k, v, causal: bool, sm_scale=None):
    """o and lse against the float64 truth; an lse wrong beside a right o is named when it is a known mistake."""
    (o64, lse64), (o_same, lse_same) = truth_of(q, k, v, causal, sm_scale)
    o, lse = got
    result = against_truth([(Ev("o ({label})", label=label), o, o64, o_same)])
    if result.status != "pass":
        return result
    lse_result = against_truth([(Ev("lse ({label})", label=label), lse, lse64, lse_same)])
    if lse_result.status != "pass":
        what = lse_hypotheses(lse, lse64, q, k, causal, sm_scale)
        if what:
            lse_result.message = Ev.seq([lse_result.message, what])
            lse_result.codes.append("kernel-lse-wrong")
        return lse_result
    return outcome("pass", Ev.seq([result.message, Ev("lse {what}", what=lse_result.message)]))


def launch_case(ctx: Context, case, offset: int, sm_scale=None) -> tuple:
    """(q, k, v, (o, lse)) of ``case`` drawn at ``offset``."""
    q, k, v = qkv(ctx, offset, *case[:4])
    return q, k, v, run(ctx, q, k, v, case[4], sm_scale)


def describe(b, h, t, d, causal) -> Ev:
    return Ev("{shape}, causal", shape=[b, h, t, d]) if causal else Ev("{shape}", shape=[b, h, t, d])


def shape_check(launches: Launches, case, offset: int):
    o, lse = launches(case, offset)[3]
    return outcome("pass", Ev("o {shape} {dtype}, lse {lse} float32", shape=list(o.shape), dtype=str(o.dtype)[6:], lse=list(lse.shape)))


def case_check(launches: Launches, case, offset: int, sm_scale=None):
    q, k, v, got = launches(case, offset, sm_scale)
    return verdict(describe(*case), got, q, k, v, case[4], sm_scale)


def cases_check(launches: Launches, cases, offset: int, divisible=None):
    """Each case against the truth; when one fails but T = 128 passes, the kernel needs a block size that divides T."""
    for n, case in enumerate(cases):
        result = case_check(launches, case, offset + n)
        if result.status != "pass":
            if divisible is not None and case_check(launches, divisible, offset + 50).status == "pass":
                result.message = Ev.seq([result.message, Ev("right at T = 128: the kernel only works when the block size divides T "
                                                             "(the tail block is dropped)")])  # fmt: skip
                result.codes.append("kernel-block-must-divide")
            return result
    return outcome("pass", Ev("{cases} all match", cases=Ev.seq([describe(*c) for c in cases], ", ")))


def layout(t: torch.Tensor) -> Strided:
    """t [B, H, T, D] as the q of a fused projection: a [B, T, H, 3D] buffer, its first D columns, heads transposed."""
    b, h, n, d = t.shape
    return Strided(t, (n * h * 3 * d, 3 * d, h * 3 * d, 1))


@guarded
def strided_check(ctx: Context):
    """q, k, v as slices of a fused qkv projection (strides not those of a contiguous [B, H, T, D])."""
    case = (1, 2, 19, 16, True)
    q, k, v = qkv(ctx, 2, *case[:4])
    label = Ev("q, k, v sliced from a fused [B, T, H, 3D] qkv and transposed")
    try:
        got = run(ctx, *map(layout, (q, k, v)), True, like=q)
    except OutOfBounds as exc:
        run(ctx, q, k, v, True)  # raises OutOfBounds again when the kernel is out of bounds anyway
        return outcome("fail", Ev("{label}: read outside their elements ({finding}): the kernel takes the strides of a contiguous "
                                  "[B, H, T, D]", label=label, finding=exc.args[0]), "kernel-contiguous-strides")  # fmt: skip
    result = verdict(label, got, q, k, v, True)
    if result.status != "pass" and verdict("", run(ctx, q, k, v, True), q, k, v, True).status == "pass":
        result.message = Ev.seq([result.message, Ev("their contiguous copies are right: the kernel assumes contiguous strides "
                                                     "(use q.stride())")])  # fmt: skip
        result.codes.append("kernel-contiguous-strides")
    return result


@guarded
def drawn_check(ctx: Context, launches: Launches):
    """T and D drawn from the grade's seed, once without and once with the causal mask."""
    t1, t2 = ctx.sizes(300, (10, 130), (10, 130))
    d = (16, 32)[ctx.seed % 2]
    return cases_check(launches, ((1, 1, t1, d, False), (1, 1, t2, d, True)), 301)


@guarded
def rising_check(ctx: Context):
    """Scores that rise along the keys: each row's max lies in a later key block, so the running sum and the
    accumulator must be rescaled by exp(m_old - m_new) whenever the max grows."""
    b, h, t, d = 1, 1, 129, 16
    q, k, v = qkv(ctx, 500, b, h, t, d)
    q[..., 0] = 1.0
    k[..., 0] = torch.arange(t) * (8 * math.sqrt(d) / t)  # + up to 8 on the last key's scaled score
    label = Ev("{case}, scores rising along the keys", case=describe(b, h, t, d, False))
    result = verdict(label, run(ctx, q, k, v, False), q, k, v, False)
    if result.status != "pass":
        result.message = Ev("{what} (the row max is in a later key block than the first)", what=result.message)
    return result


@guarded
def large_logits_check(ctx: Context):
    """Scaled scores of a few hundred: exp overflows float32 above ~88 unless the running max is subtracted."""
    q, k, v = qkv(ctx, 400, 1, 1, 33, 16)
    o, lse = run(ctx, 12 * q, 12 * k, v, False)
    (o64, _), _ = truth_of(12 * q, 12 * k, v, False)
    bad = first_nonfinite(o, o64)
    if bad is not None:
        if verdict("", run(ctx, q, k, v, False), q, k, v, False).status != "pass":
            return outcome("fail", Ev("scores ~±300: non-finite o at {at}, and wrong at ordinary scores too", at=list(bad)))
        return outcome("fail", Ev("scores ~±300: non-finite o at {at}, right at ordinary scores: exp overflowed", at=list(bad)),
                       "kernel-no-max-shift")  # fmt: skip
    q, k = 12 * q, 12 * k
    result = verdict(Ev("scores ~±300"), (o, lse), q, k, v, False)
    return result if result.status != "pass" else outcome("pass", Ev("scores ~±300: finite and right ({what})", what=result.message))


@guarded
def half_check(ctx: Context):
    """float16 q, k, v over 129 keys with values ~200: an accumulator of p @ v kept in float16 rounds away its
    small terms (the sum reaches ~25 000, where float16's step is 16)."""
    b, h, t, d = 1, 1, 129, 16
    q, k, v = qkv(ctx, 550, b, h, t, d, torch.float64)
    q, v = 0.1 * q, 200 + v
    q, k, v = (x.half() for x in (q, k, v))
    label = Ev("float16 {case}, v ~200", case=describe(b, h, t, d, False))
    result = verdict(label, run(ctx, q, k, v, False), q, k, v, False)
    if result.status != "pass":
        f32 = [x.float() for x in (q, k, v)]
        if verdict("", run(ctx, *f32, False), *f32, False).status == "pass":
            result.message = Ev.seq([result.message, Ev("the same inputs in float32 are right: the kernel accumulates in float16")])
            result.codes.append("kernel-fp16-accumulation")
    return result


@guarded
def out_of_bounds_check(launches: Launches):
    """Edge tiles under the guard: every load and store must stay inside q, k, v, o and lse (the launches of the
    edge-size and causal checks, made again only where those did not run)."""
    launches(EDGE_CASES[1], 101)
    launches(CAUSAL_CASES[1], 201)
    return outcome("pass", Ev("T = 17 and 129 (causal): every load and store stayed inside the tensors"))


@guarded
def future_check(ctx: Context, launches: Launches):
    """causal=True: changing the keys and values from position 9 on must leave every query before 9 unmoved
    (against the head-dim-64 check's launch)."""
    q, k, v, (before, _) = launches(HEAD_DIM_64, 250)
    k2, v2 = k.clone(), v.clone()
    k2[..., FUTURE_FROM:, :] += 3.0
    v2[..., FUTURE_FROM:, :] += 3.0
    after = run(ctx, q, k2, v2, True)[0]
    moved = (after - before).abs().amax(dim=(0, 1, 3))[:FUTURE_FROM]
    if (moved > 0).any():
        row = int((moved > 0).nonzero().max())
        return outcome("fail", Ev("causal=True, T=40: query {row} moves when the keys from position {start} on change (it sees the future)",
                                  row=row, start=FUTURE_FROM))  # fmt: skip
    return outcome("pass", Ev("causal=True, T=40: no query before {start} moves when the keys from {start} on change", start=FUTURE_FROM))


@guarded
def varying_check(launches: Launches):
    for n, case in enumerate(((1, 1, 7, 32, True), (1, 1, 33, 16, False), (2, 1, 5, 16, True))):
        result = case_check(launches, case, 600 + n)
        if result.status != "pass":
            result.message = Ev("call {n} in a row: {what}", n=n + 1, what=result.message)
            return result
    return outcome("pass", Ev("three calls with different T, D and causal in a row all match"))


@dataclass(frozen=True)
class Probe:
    """Scores rising along the keys (the max moves to later blocks) at T = 129: every block size shows its tiles."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    causal: bool

    def user(self, ctx: Context):
        return run(ctx, self.q.float(), self.k.float(), self.v.float(), self.causal)[0]

    def expected(self, variant):
        variant = variant if isinstance(variant, KernelVariant) else KernelVariant()
        return tiled(self.q, self.k, self.v, self.causal, 1 / math.sqrt(self.q.shape[-1]), variant)


def bench_inputs(dims: dict, dtype: torch.dtype, device, gen: torch.Generator) -> tuple:
    """q, k, v [B, H, T, D] of one ``--bench`` case, drawn where they are timed (causal=False, the default)."""
    shape = (dims["B"], dims["H"], dims["T"], dims["D"])
    return tuple(torch.randn(*shape, generator=gen, device=device, dtype=dtype) for _ in range(3))


def bench_bytes(dims: dict, esize: int) -> int:
    """q, k, v read once and o written once, in the inputs' dtype, and lse written once in float32."""
    rows = dims["B"] * dims["H"] * dims["T"]
    return 4 * rows * dims["D"] * esize + 4 * rows


class TritonFlashAttentionTask:
    name = "triton_flash_attention"
    forbidden = FORBIDDEN
    builtin_what = Ev("attention, softmax, exp or matmul in the launcher")
    builtin_code = "kernel-uses-torch-op"
    # Two T x T x D products per (batch, head): q k^T and p v, a multiply-add each. No causal case: a Case holds shape dims only.
    bench = KernelBench("compute", tuple(Case({"B": 4, "H": 16, "T": t, "D": 64}) for t in (1024, 2048, 4096)), bench_inputs,
                        F.scaled_dot_product_attention, "F.scaled_dot_product_attention", bench_bytes,
                        lambda d: 4 * d["B"] * d["H"] * d["T"] ** 2 * d["D"])  # fmt: skip
    implies = {"kernel-rescale-forgotten": {"kernel-block-must-divide"}}  # one key block of 128 at T = 128: no max to rescale

    def checks(self, ctx: Context) -> list[CheckDef]:
        q, k, v = qkv(ctx, 700, 1, 1, 20, 16)
        launches = Launches(partial(launch_case, ctx), (WrongShape,))
        return [
            CheckDef("shape.basic", "shape", partial(guarded(shape_check), launches, EDGE_CASES[1], 101)),
            CheckDef("shape.one-token", "shape", partial(guarded(shape_check), launches, EDGE_CASES[0], 100)),
            CheckDef("shape.fused-qkv-strides", "shape", partial(strided_check, ctx)),
            CheckDef("numerical.edge-sizes", "numerical", partial(guarded(cases_check), launches, EDGE_CASES, 100, DIVISIBLE)),
            CheckDef("numerical.causal", "numerical", partial(guarded(cases_check), launches, CAUSAL_CASES, 200)),
            CheckDef("numerical.head-dim-64", "numerical", partial(guarded(case_check), launches, HEAD_DIM_64, 250)),
            CheckDef("numerical.sm-scale", "numerical", partial(guarded(case_check), launches, (1, 1, 33, 16, False), 260, 0.05)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx, launches)),
            CheckDef("numerical.rising-scores", "numerical", partial(rising_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("stability.float16-accumulation", "stability", partial(half_check, ctx)),
            CheckDef("mask-leak.out-of-bounds", "mask-leak", partial(out_of_bounds_check, launches)),
            CheckDef("mask-leak.causal-future", "mask-leak", partial(future_check, ctx, launches)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(guarded(no_mutation_check), ctx, lambda: launch(ctx, q, k, v, causal=True), {"q": q, "k": k, "v": v})),
            CheckDef("robustness.varying-shape", "robustness", partial(varying_check, launches)),
        ]  # fmt: skip

    def probes(self, ctx: Context) -> list[Probe]:
        q, k, v = qkv(ctx, 1100, 1, 1, 129, 16, torch.float64)
        q[..., 0] = 1.0
        k[..., 0] = torch.arange(129) * (4 * 4 / 129)
        q, k, v = (x.float().double() for x in (q, k, v))  # what the user's float32 kernel sees, exactly
        return [Probe(q, k, v, causal) for causal in (False, True)]

    def hypotheses(self, ctx: Context):
        found = [("causal-mask-missing", KernelVariant(causal="none"))]
        for n in BLOCKS:
            found += [("kernel-rescale-forgotten", KernelVariant(rescale=r, block_n=n)) for r in ("none", "sum-only", "acc-only")]
        for m in BLOCKS:
            found += [("kernel-causal-per-tile", KernelVariant(causal="tile", block_m=m, block_n=n)) for n in BLOCKS]
        return found


TASK = TritonFlashAttentionTask()
