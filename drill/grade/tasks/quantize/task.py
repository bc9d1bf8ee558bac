"""The ``quantize`` task: ``quantize_int8(w) -> (q, scale)`` per output channel, and ``dequantize(q, scale)``.

Symmetric absmax int8 (as LLM.int8()'s vector-wise weights, bitsandbytes, torchao): per row
``scale = absmax / 127`` and ``q = clamp(round(w / scale), -127, 127)``. There is no single right q
in a low precision (the quotient itself rounds), so the checks judge properties against the
float64 truth: each scale by the tolerance rule, each row's dequantization error against the bound
``scale / 2`` (in float32; in bfloat16 against the same algorithm run in bfloat16, times two), each
row's absmax landing on ±127, and q inside [-127, 127]. The bfloat16 weights are rows where the
quotient rounds to 128 without the clamp: the int8 cast then wraps to -128. An epsilon guard that
quantizes rows of 1e-30 to zero passes with a note; hypotheses are compared away from rounding edges,
where float32 or another op order may round the other way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.compare import against_truth, expect_shape
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

OUT, IN = 6, 10
ENTRY_DEQUANTIZE = "dequantize"
FORBIDDEN = {
    "quantize_per_channel": "torch.quantize_per_channel",
    "quantize_per_tensor": "torch.quantize_per_tensor",
    "fake_quantize_per_channel_affine": "torch.fake_quantize_per_channel_affine",
    "fake_quantize_per_tensor_affine": "torch.fake_quantize_per_tensor_affine",
    "_make_per_channel_quantized_tensor": "torch._make_per_channel_quantized_tensor",
    "quantize_per_channel_default": "torch.ao.quantization (quantize_per_channel)",
}


@dataclass(frozen=True)
class QuantVariant:
    scope: str = "row"  # row (correct) | tensor: one absmax for the whole matrix
    levels: float = 127.0  # 255.0: the unsigned byte's range
    rounding: str = "round"  # round (correct) | trunc: the int8 cast | floor
    overflow: str = "clamp"  # clamp (correct) | int8: clamped to the int8 range [-128, 127] | wrap: the int8 cast of 128 and beyond


CORRECT_QUANT = QuantVariant()


def reference(w, variant: QuantVariant = CORRECT_QUANT):
    """(q as float, scale [out, 1]) in w's dtype (float64 for the truth)."""
    absmax = w.abs().amax(dim=1, keepdim=True) if variant.scope == "row" else w.abs().amax().expand(w.shape[0], 1)
    scale = absmax / variant.levels
    x = w / torch.where(scale == 0, torch.ones_like(scale), scale)
    x = {"round": torch.round, "trunc": torch.trunc, "floor": torch.floor}[variant.rounding](x)
    if variant.overflow == "wrap":
        return torch.remainder(x + 128, 256) - 128, scale
    return x.clamp(-128 if variant.overflow == "int8" else -127, 127), scale


def make_weight(ctx: Context, offset: int, shape=(OUT, IN), dtype=torch.float32):
    """Rows of different magnitudes (0.01 to 10), so a per-tensor scale is far from any row's."""
    gen = ctx.generator(offset)
    magnitudes = torch.logspace(-2, 1, shape[0], dtype=torch.float64)[torch.randperm(shape[0], generator=gen)]
    return (magnitudes[:, None].to(ctx.device) * ctx.randn(*shape, gen=gen, dtype=torch.float64)).to(dtype)


def wrapping_rows(ctx: Context, offset: int, n: int = OUT):
    """bfloat16 rows whose absmax / (absmax / 127), computed in bfloat16, rounds to 128."""
    gen = ctx.generator(offset)
    pool = torch.randn(400, IN, generator=gen, dtype=torch.float64).to(torch.bfloat16)
    q, _ = reference(pool, QuantVariant(overflow="wrap"))
    picked = pool[(q.abs().amax(dim=1) == 128) | (q.amax(dim=1) == -128)][:n]
    return picked.to(ctx.device)


def quantize(ctx: Context, w):
    """The user's (q, scale) with scale as [out, 1]; WrongShape names a contract break."""
    ret = ctx.call(ctx.entry, w)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(t, torch.Tensor) for t in ret)):
        raise WrongShape(Ev("quantize_int8 returned {type}, not (q, scale), two tensors", type=type(ret).__name__))
    q, scale = ret
    expect_shape(q, w.shape, "q")
    if q.dtype != torch.int8:
        raise WrongShape(Ev("q has dtype {dtype}, not torch.int8", dtype=str(q.dtype)))
    if not scale.is_floating_point():
        raise WrongShape(Ev("scale has dtype {dtype}, not a floating dtype", dtype=str(scale.dtype)))
    if scale.numel() == 1 and (w.shape[0] > 1 or scale.dim() == 0):
        whole = Ev("scale has shape {shape}: one scale for the whole matrix; expected [{rows}, 1] or [{rows}], one per output channel "
                   "(row)", shape=list(scale.shape), rows=w.shape[0])  # fmt: skip
        raise Broken(outcome("fail", whole, "quant-per-tensor-scale"))
    if tuple(scale.shape) not in ((w.shape[0], 1), (w.shape[0],)):
        raise WrongShape(Ev("scale has shape {shape}, expected [{rows}, 1] or [{rows}]: one scale per output channel (row)",
                            shape=list(scale.shape), rows=w.shape[0]))  # fmt: skip
    return q, scale.reshape(-1, 1)


class Broken(Exception):
    """The user's return value already proves a classic bug: the check's finished outcome."""

    def __init__(self, result):
        self.result = result


def finished(check):
    """``check``, with a Broken raised anywhere inside it turned into its outcome."""

    def run(*args):
        try:
            return check(*args)
        except Broken as exc:
            return exc.result

    return run


def per_tensor(scale, truth) -> bool:
    """The same scale on every row while the rows' absmax differ."""
    return scale.numel() > 1 and bool((scale == scale[0]).all()) and not bool((truth == truth[0]).all())


def labelled(label, what) -> Ev:
    return Ev("{label}: {what}", label=label, what=what)


def unlabelled(message, label):
    """``message`` without the ``label: `` that :func:`labelled` put in front of it."""
    if isinstance(message, Ev) and message.msgid == "{label}: {what}" and message.params["label"] == label:
        return message.params["what"]
    return message


def scale_check(ctx: Context, w, label: str):
    q, scale = quantize(ctx, w)
    truth = reference(w.double())[1]
    if per_tensor(scale, truth):
        same = Ev("every row got the same scale {scale:.4g}, though the rows' absmax range from {low:.3g} to {high:.3g}: one "
                  "scale per output channel", scale=scale[0].item(), low=127 * truth.min().item(), high=127 * truth.max().item())  # fmt: skip
        return outcome("fail", labelled(label, same), "quant-per-tensor-scale")
    return against_truth([(labelled(label, Ev("scale (absmax / 127 per row)")), scale, truth, reference(w)[1])])


def error_rows(w, q, scale):
    """Per row: the largest |q * scale - w| in float64, from the user's own q and scale."""
    return (q.double() * scale.double() - w.double()).abs().amax(dim=1)


def bound_check(ctx: Context, w, label: str):
    """Each row's dequantization error within scale / 2 (float32), or twice the same algorithm's in a low precision."""
    q, scale = quantize(ctx, w)
    err = error_rows(w, q, scale)
    half = scale.double().reshape(-1) / 2
    if w.dtype in (torch.float32, torch.float64):
        allowed = half * (1 + 1e-4) + torch.finfo(w.dtype).tiny
    else:  # the quotient rounds (spacing 0.5 near 127: a quarter step) and so does the scale (127 * u of a step)
        q0, s0 = reference(w)
        carried = half * 2 * (0.5 + 0.25 + 127 * torch.finfo(w.dtype).eps / 2)
        allowed = torch.maximum(2 * error_rows(w, q0, s0), carried)
    bad = (err > allowed).nonzero()
    if len(bad):
        r = int(bad[0])
        col = int((q[r].double() * scale[r].double() - w[r].double()).abs().argmax())
        return outcome("fail", labelled(label, Ev(
            "row {row}: |q * scale - w| is {err:.4g} = {steps:.3g} scale at column {col} (w = {w:.6g}, q = {q}); allowed {allowed:.4g} "
            "(scale / 2 = {half:.4g})", row=r, err=err[r].item(), steps=(err[r] / scale[r].item()).item(), col=col,
            w=w[r, col].item(), q=int(q[r, col]), allowed=allowed[r].item(), half=half[r].item())))  # fmt: skip
    worst = (err / (2 * half).clamp_min(1e-300)).max().item()
    return outcome("pass", labelled(label, Ev("every row's error within its bound (worst {worst:.3g} scale)", worst=worst)))


def levels_check(ctx: Context, w, label: str):
    """q within [-127, 127], and each row's absmax element at ±127 with its sign."""
    q, scale = quantize(ctx, w)
    return levels_outcome(w, q, scale, label)


def levels_outcome(w, q, scale, label: str, rows=None):
    """The levels check on the user's (q, scale), on ``rows`` (all by default)."""
    rows = range(w.shape[0]) if rows is None else rows
    quotient = w.double() / scale.double()  # the user's own w / scale, to tell a rounding edge from a bug
    low = [(r, c) for r, c in (q == -128).nonzero().tolist() if r in rows]
    if low:
        r, c = next(((r, c) for r, c in low if w[r, c] > 0), low[0])
        if w[r, c] > 0:
            return outcome("fail", labelled(label, Ev("q[{row}, {col}] is -128 for w = {w:.6g}: w / scale rounded to 128 and the int8 "
                                                      "cast wrapped it; clamp to [-127, 127] before the cast", row=r, col=c,
                                                      w=w[r, c].item())), "quant-no-clamp")  # fmt: skip
        edge = {round(quotient[r, c].item()), round((w[r, c] / scale[r, 0].to(w.dtype)).item())}  # float64, w's dtype
        if -128 in edge:  # a quotient at the edge, kept by no clamp or by the int8 range's
            return outcome("fail", labelled(label, Ev("q[{row}, {col}] is -128 for w = {w:.6g}: w / scale rounded to -128 and q kept "
                                                      "it; clamp to [-127, 127] (the int8 range [-128, 127] is not symmetric)", row=r,
                                                      col=c, w=w[r, c].item())), "quant-no-clamp")  # fmt: skip
        return outcome("fail", labelled(label, Ev("q[{row}, {col}] is -128 for w = {w:.6g}: symmetric int8 uses -127 to 127",
                                                  row=r, col=c, w=w[r, c].item())))  # fmt: skip
    top = w.abs().argmax(dim=1)
    for r in rows:
        if w[r, top[r]] == 0:
            continue
        want = 127 if w[r, top[r]] > 0 else -127
        got = int(q[r, top[r]])
        if got != want:
            where = Ev("row {row}'s largest weight {w:.6g} (column {col}) has q = {got}, not {want}", row=r,
                       w=w[r, top[r]].item(), col=int(top[r]), got=got, want=want)  # fmt: skip
            x = quotient[r, top[r]].item()
            if got == want - (1 if want > 0 else -1) and abs(x - want) < 1e-3:
                short = Ev("w / scale is {want} up to a rounding difference ({x:.9g} with your scale); computed just short of {want}, "
                           "truncation takes it to {got} where rounding gives {want}", want=want, x=x, got=got)  # fmt: skip
                return outcome("fail", labelled(label, labelled(where, short)), "quant-truncation")
            return outcome("fail", labelled(label, labelled(where, Ev("the absmax of each row maps to ±127"))))
    return outcome("pass", labelled(label, Ev("q in [-127, 127], every row's absmax at ±127 (exact)")))


def drawn_check(ctx: Context):
    """A weight of drawn [out, in] through the scale, error-bound and levels checks: a file right only at the
    fixed shapes fails here."""
    shape = ctx.sizes(320, (2, 16), (3, 40), avoid=(OUT, IN))
    w, label = make_weight(ctx, 321, shape), Ev("[{rows}, {cols}] float32 (drawn from the seed)", rows=shape[0], cols=shape[1])
    results = [check(ctx, w, label) for check in (scale_check, bound_check, levels_check)]
    failed = next((r for r in results if r.status != "pass"), None)
    return failed or outcome("pass", labelled(label, Ev.seq(unlabelled(r.message, label) for r in results)))


def zero_row_check(ctx: Context):
    w = make_weight(ctx, 400)
    w[2] = 0.0
    q, scale = quantize(ctx, w)
    if not torch.isfinite(scale).all():
        return outcome("fail", Ev("an all-zero row gives scale {scale}: guard the division (q = 0 there)", scale=scale[2].item()))
    if (q[2] != 0).any():
        return outcome("fail", Ev("an all-zero row gives q = {q}, not zeros", q=q[2].tolist()))
    out = dequantize(ctx, q, scale, scale_shape(ctx, w))
    if not torch.isfinite(out).all() or (out[2] != 0).any():
        return outcome("fail", Ev("an all-zero row does not dequantize to zeros"))
    return outcome("pass", Ev("an all-zero row: q = 0, a finite scale, zeros back"))


TINY = 1e-6  # rows below an epsilon guard's floor (1e-8, 1e-12, float32's eps): the contract does not ask for them


def guarded_rows(w, scale) -> list[int]:
    """Rows of magnitude below TINY whose scale is larger than absmax / 127: an epsilon guard's floor
    (``amax.clamp(min=1e-8) / 127``, as common quantization libraries write it), which quantizes them to zero."""
    absmax = w.double().abs().amax(dim=1)
    s = scale.double().reshape(-1)
    return [r for r in range(w.shape[0]) if 0 < absmax[r] <= TINY and torch.isfinite(s[r]) and s[r] > absmax[r] / 127]


def extremes_check(ctx: Context):
    """float32 rows around 1e30 and 1e-30: absmax / 127 is still a normal float, and so is every q * scale. An epsilon
    guard that quantizes the 1e-30 row to zero passes with a note: the contract gives no reason such rows matter."""
    w = make_weight(ctx, 410)
    w[0] *= 1e30
    w[1] *= 1e-30
    label = Ev("rows ~1e30 and ~1e-30 (float32)")
    result = bound_check(ctx, w, label)
    if result.status != "pass":
        return result
    q, scale = quantize(ctx, w)
    guarded = guarded_rows(w, scale)
    result = levels_outcome(w, q, scale, label, [r for r in range(w.shape[0]) if r not in guarded])
    if result.status != "pass" or not guarded:
        return result
    r = guarded[0]
    return outcome("pass", labelled(label, Ev(
        "q in [-127, 127], every other row's absmax at ±127 (exact); note: row {row} (absmax {absmax:.3g}) has scale {scale:.3g}, an "
        "epsilon guard's floor instead of absmax / 127, so its q is 0: accepted, the contract does not ask for rows this small",
        row=r, absmax=w[r].abs().max().item(), scale=scale[r, 0].item())))  # fmt: skip


def dequantizer(ctx: Context):
    handle = ctx.user.entry(ENTRY_DEQUANTIZE)
    if handle is None:
        raise UserCodeError(Ev("the file does not define dequantize(q, scale)"), "not-implemented")
    return handle


DEQUANTIZED = Ev("dequantize's output")


def dequantize(ctx: Context, q, scale, shape):
    out = ctx.call(dequantizer(ctx), q, scale.reshape(shape))
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("dequantize returned {type}, not a tensor", type=type(out).__name__))
    expect_shape(out, q.shape, DEQUANTIZED)
    return out


def scale_shape(ctx: Context, w):
    """The user's own scale shape ([out, 1] or [out]), so dequantize gets what it expects."""
    ret = ctx.call(ctx.entry, w)
    shape = ret[1].shape if isinstance(ret, (tuple, list)) and len(ret) == 2 and isinstance(ret[1], torch.Tensor) else None
    return shape if shape in (torch.Size([w.shape[0], 1]), torch.Size([w.shape[0]])) else torch.Size([w.shape[0], 1])


def dequantize_check(ctx: Context, dtype):
    """The judge's own q and scale through the user's dequantize, against q * scale."""
    w = make_weight(ctx, 500, dtype=dtype)
    q, scale = reference(w)
    out = dequantize(ctx, q.to(torch.int8), scale, scale_shape(ctx, w))
    if out.dtype != dtype:
        return outcome("fail", Ev("dequantize returned {got}, the scale's dtype is {dtype}", got=str(out.dtype), dtype=str(dtype)))
    return against_truth([(Ev("dequantize ({dtype})", dtype=str(dtype)[6:]), out, q.double() * scale.double(), q.to(dtype) * scale)])


def gradient_check(ctx: Context):
    """d dequantize / d scale = q (a learnable scale, as in LSQ): the output must stay differentiable in scale."""
    w = make_weight(ctx, 600)
    q, scale = reference(w)
    shape = scale_shape(ctx, w)
    leaf = scale.reshape(shape).clone().requires_grad_()
    out = ctx.call(dequantizer(ctx), q.to(torch.int8), leaf)
    expect_shape(out, w.shape, DEQUANTIZED)
    seed_grad = ctx.randn(*w.shape, gen=ctx.generator(601), dtype=torch.float64)
    ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches scale through dequantize (is the output detached?)"))
    truth = (q.double() * seed_grad).sum(dim=1).reshape(shape)
    same = (q * seed_grad.float()).sum(dim=1).reshape(shape)
    return against_truth([(Ev("d dequantize / d scale"), leaf.grad, truth, same)])


def rows_check(ctx: Context):
    """float64: changing one row may change that row's q and scale only (one scale per output channel)."""
    w = make_weight(ctx, 700, dtype=torch.float64)
    q0, s0 = quantize(ctx, w)
    for r in range(w.shape[0]):
        w2 = w.clone()
        w2[r] *= 50.0
        q, s = quantize(ctx, w2)
        others = [i for i in range(w.shape[0]) if i != r and (s[i] != s0[i] or (q[i] != q0[i]).any())]
        if others:
            return outcome("fail", Ev("scaling row {row} by 50 changed row {other}'s scale or q: each row is quantized on its own "
                                      "(absmax over dim 1, the input dim)", row=r, other=others[0]), "quant-per-tensor-scale")  # fmt: skip
    return outcome("pass", Ev("each of the {rows} rows is quantized from itself alone (float64)", rows=w.shape[0]))


def no_mutation_check(ctx: Context):
    w = make_weight(ctx, 800)
    before = w.clone()
    quantize(ctx, w)
    if not torch.equal(w, before):
        return outcome("fail", Ev("modified in place: {names}", names="w"), "mutates-input")
    return outcome("pass", Ev("{names} unchanged", names="w"))


EDGE = 1e-6  # relative: a quotient this close to a rounding edge may go either way in float32 or in another op order


def on_an_edge(w) -> torch.Tensor:
    """Entries whose w / scale, for any scale a hypothesis uses (per row or per tensor, / 127 or / 255), sits on a
    rounding edge (an integer for truncation, a half for rounding): the user's float32, or w * 127 / absmax, may
    round them the other way (126 for 127), so they tell no mistake apart and are not compared."""
    edge = torch.zeros(w.shape, dtype=torch.bool, device=w.device)
    for scope in ("row", "tensor"):
        for levels in (127.0, 255.0):
            x = w / reference(w, QuantVariant(scope=scope, levels=levels))[1]
            for shift in (0.0, 0.5):
                edge |= ((x - shift - torch.round(x - shift)).abs() <= EDGE * x.abs()) & (x != 0)
    return edge


@dataclass(frozen=True)
class Probe:
    w: torch.Tensor

    def user(self, ctx: Context):
        ret = ctx.call(ctx.entry, self.w.clone())
        if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and isinstance(ret[0], torch.Tensor)):
            return None
        return ret[0].double()

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct quantization" here.
        variant = variant if isinstance(variant, QuantVariant) else CORRECT_QUANT
        return reference(self.w, variant)[0].masked_fill(on_an_edge(self.w), float("nan"))


# The clamp is written three ways whatever the mistake: to ±127, to the int8 range [-128, 127], or left to the cast.
OVERFLOWS = ("clamp", "int8", "wrap")
HYPOTHESES = tuple((code, replace(variant, overflow=overflow)) for code, variant in (
    ("quant-per-tensor-scale", QuantVariant(scope="tensor")),
    ("quant-truncation", QuantVariant(rounding="trunc")),
    ("quant-truncation", QuantVariant(rounding="floor")),
    ("quant-255-not-127", QuantVariant(levels=255.0)),
) for overflow in OVERFLOWS)  # fmt: skip


BF16_ROWS = Ev("bfloat16 rows")
BF16_WRAPPING = Ev("bfloat16 rows whose absmax / scale rounds to 128")


class QuantizeTask:
    name = "quantize"
    forbidden = FORBIDDEN
    builtin_what = Ev("quantization")
    builtin_code = "uses-builtin-quantize"

    def checks(self, ctx: Context) -> list[CheckDef]:
        w = partial(make_weight, ctx)
        bf16 = partial(wrapping_rows, ctx, 300)
        square = partial(make_weight, ctx, 3, (8, 8))
        return [
            CheckDef("shape.q-and-scale", "shape", partial(finished(levels_check), ctx, w(0), "[6, 10] float32")),
            CheckDef("shape.one-row", "shape", partial(finished(levels_check), ctx, w(1, (1, 10)), "[1, 10] float32")),
            CheckDef("numerical.scale", "numerical", partial(finished(scale_check), ctx, w(2), "[6, 10] float32")),
            CheckDef("numerical.scale-square", "numerical", partial(finished(scale_check), ctx, square(), "[8, 8] float32")),
            CheckDef("numerical.error-bound", "numerical", partial(finished(bound_check), ctx, w(4), "[6, 10] float32")),
            CheckDef("numerical.error-bound-wide", "numerical", partial(finished(bound_check), ctx, w(5, (3, 64)), "[3, 64] float32")),
            CheckDef("numerical.float64", "numerical", partial(finished(bound_check), ctx, w(6, dtype=torch.float64), "[6, 10] float64")),
            CheckDef("numerical.drawn", "numerical", partial(finished(drawn_check), ctx)),
            CheckDef("numerical.bfloat16-scale", "numerical", partial(finished(scale_check), ctx, bf16(), BF16_ROWS)),
            CheckDef("numerical.bfloat16-levels", "numerical", partial(finished(levels_check), ctx, bf16(), BF16_WRAPPING)),
            CheckDef("numerical.bfloat16-error-bound", "numerical", partial(finished(bound_check), ctx, bf16(), BF16_ROWS)),
            CheckDef("numerical.dequantize", "numerical", partial(finished(dequantize_check), ctx, torch.float32)),
            CheckDef("numerical.dequantize-bfloat16", "numerical", partial(finished(dequantize_check), ctx, torch.bfloat16)),
            CheckDef("gradient.dequantize-scale", "gradient", partial(finished(gradient_check), ctx)),
            CheckDef("mask-leak.rows", "mask-leak", partial(finished(rows_check), ctx)),
            CheckDef("stability.zero-row", "stability", partial(finished(zero_row_check), ctx)),
            CheckDef("stability.extreme-rows", "stability", partial(finished(extremes_check), ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(finished(no_mutation_check), ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(make_weight(ctx, 1100, (5, 8), torch.float64)), Probe(make_weight(ctx, 1101, (4, 12), torch.float64))]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = QuantizeTask()
