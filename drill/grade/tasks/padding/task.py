"""The ``padding`` task: ``make_attention_mask(lengths, T, causal=False)`` -> bool [B, 1, T, T].

The reference masks keys (columns) j >= lengths[b]; padded query rows still see the real
keys, so no row is ever empty and the softmax stays finite. With ``causal`` it is ANDed
with the lower triangle. Mistakes are modelled with the shared ``Variant`` mask knobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD, expect_shape, moved
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.reference import CORRECT, Variant, attention, causal_mask
from drill.grade.checks.common import no_mutation_check
from drill.text.messages import Ev

# (lengths, T): a length of 1, a length of T, T above every length, a single sample.
CASES = (((5, 1, 3), 5), ((2, 4), 6), ((7, 7), 7), ((1,), 3))

@dataclass(frozen=True)
class PadVariant:
    """Mistakes of the padding mask itself, on top of the shared mask knobs (``base``)."""

    base: Variant = CORRECT
    rows: bool = False  # padded query rows masked too (real[:, None, :, None] & real[:, None, None, :])
    length_offset: int = 0  # keys j < lengths[b] + offset are real: <= instead of <, or lengths - 1


# All PadVariants, so that combine() pairs a mask or causal mistake with a padding one (two bugs at once).
HYPOTHESES = (
    ("mask-inverted", PadVariant(Variant(mask="inverted"))),
    ("mask-on-queries", PadVariant(Variant(mask="transposed"))),
    ("causal-off-by-one", PadVariant(Variant(causal=1))),
    ("causal-blocks-self", PadVariant(Variant(causal=-1))),
    ("causal-transposed", PadVariant(Variant(causal="triu"))),
    ("padding-query-rows-masked", PadVariant(rows=True)),
    ("padding-length-off-by-one", PadVariant(length_offset=1)),
    ("padding-length-off-by-one", PadVariant(length_offset=-1)),
)


def reference(lengths, t: int, causal: bool, variant=CORRECT, device=None) -> torch.Tensor:
    """bool [B, 1, T, T]; True = may attend."""
    pad = variant if isinstance(variant, PadVariant) else PadVariant(variant)
    variant = pad.base
    real = torch.arange(t, device=device)[None, :] < torch.as_tensor(lengths, device=device)[:, None] + pad.length_offset
    mask = real[:, None, :, None] if variant.mask == "transposed" else real[:, None, None, :]
    if pad.rows:
        mask = mask & real[:, None, :, None]
    mask = mask.expand(len(real), 1, t, t)
    if causal:
        mask = mask & causal_mask(t, variant, device)
    return ~mask if variant.mask == "inverted" else mask


def run(ctx: Context, lengths, t: int, causal: bool):
    out = ctx.call(ctx.entry, torch.tensor(lengths, device=ctx.device), t, causal=causal)
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("returned {type}, not a tensor", type=type(out).__name__))
    expect_shape(out, (len(lengths), 1, t, t), Ev("mask"))
    return out


def shape_check(ctx: Context, lengths, t, causal):
    out = run(ctx, lengths, t, causal)
    if out.dtype != torch.bool:
        return outcome("fail", Ev("mask dtype is {dtype}, expected torch.bool", dtype=str(out.dtype)), "mask-not-bool")
    if out.device.type != ctx.device.type:  # ctx.device is "cuda", a tensor's "cuda:0"
        return outcome("fail", Ev("mask is on {device}, lengths are on {expected}", device=str(out.device), expected=str(ctx.device)))
    return outcome("pass", Ev("bool {shape}", shape=list(out.shape)))


def exact_check(ctx: Context, causal: bool, cases=CASES):
    for lengths, t in cases:
        out = run(ctx, lengths, t, causal).bool()
        wrong = out != reference(lengths, t, causal, device=ctx.device)
        if wrong.any():
            b, _, i, j = (int(n) for n in wrong.nonzero()[0])
            found = dict(lengths=list(lengths), t=t, b=b, i=i, j=j)
            if out[b, 0, i, j]:
                return outcome("fail", Ev("lengths {lengths}, T={t}: mask[{b}, 0, {i}, {j}] is True (query {i} may attend key {j})", **found))
            return outcome("fail", Ev("lengths {lengths}, T={t}: mask[{b}, 0, {i}, {j}] is False (query {i} may not attend key {j})", **found))
    kind = Ev("causal + padding") if causal else Ev("padding")
    return outcome("pass", Ev("{kind} masks equal the reference for {n} length sets", kind=kind, n=len(cases)))


def drawn_check(ctx: Context):
    """B, two T (never a fixed case's) and the lengths drawn from the seed, with and without causal."""
    b, *ts = ctx.sizes(400, (2, 9), (4, 14), (4, 14), avoid=(3, 5, 6, 7))
    gen = ctx.generator(401)
    cases = tuple((tuple(torch.randint(1, t + 1, (b,), generator=gen).tolist()), t) for t in ts)
    messages = []
    for causal in (False, True):
        result = exact_check(ctx, causal, cases)
        messages.append(result.message)
        if result.status != "pass":
            break
    label = Ev("a configuration drawn from the seed (B={b}, T={ts})", b=b, ts=ts)
    result.message = Ev("{label}: {what}", label=label, what=Ev.seq(messages))
    return result


def leak_check(ctx: Context, causal: bool):
    """The user's mask in float64 attention: padded (or future) keys must never move an output."""
    lengths, t = (5, 1, 3), 5
    mask = run(ctx, lengths, t, causal)
    gen = ctx.generator(300 + causal)
    q, k, v = (ctx.randn(3, 1, t, 4, gen=gen, dtype=torch.float64) for _ in range(3))
    base = attention(q, k, v, mask.bool())[0]
    for b, n in enumerate(lengths):
        for j in range(t):
            k2, v2 = k.clone(), v.clone()
            k2[b, 0, j] += 10.0
            v2[b, 0, j] += 10.0
            change = moved(attention(q, k2, v2, mask.bool())[0][b, 0], base[b, 0])  # [Tq]
            for i in range(t):
                forbidden = j >= n or (causal and j > i)
                if forbidden and change[i] > LEAK_THRESHOLD:
                    if j >= n:
                        return outcome("fail", Ev("sample {b} (length {n}): query {i} sees padded key {j}", b=b, n=n, i=i, j=j))
                    return outcome("fail", Ev("sample {b} (length {n}): query {i} sees future key {j}", b=b, n=n, i=i, j=j))
    if causal:
        return outcome("pass", Ev("padded and future keys (lengths 5, 1, 3) never reach an output"))
    return outcome("pass", Ev("padded keys (lengths 5, 1, 3) never reach an output"))


def empty_rows_check(ctx: Context, causal: bool):
    """A query row with no allowed key makes the softmax 0/0 = NaN."""
    lengths, t = (5, 1, 3), 5
    mask = run(ctx, lengths, t, causal).bool()
    empty = ~mask.any(dim=-1)  # [B, 1, T]
    if empty.any():
        b, _, i = (int(n) for n in empty.nonzero()[0])
        return outcome("fail", Ev("sample {b} (length {n}): query {i} may attend to no key (softmax gives NaN)", b=b, n=lengths[b], i=i))
    return outcome("pass", Ev("every query row allows at least one key"))


def varying_check(ctx: Context):
    for n, (lengths, t) in enumerate((((3, 2), 3), ((6, 1), 6), ((2, 4), 4))):
        out = run(ctx, lengths, t, True).bool()
        if not torch.equal(out, reference(lengths, t, True, device=ctx.device)):
            return outcome("fail", Ev("call {n} of 3 (T={t}) differs from the reference", n=n + 1, t=t))
    return outcome("pass", Ev("calls with T = 3, 6, 4 in a row all match (no stale cached mask)"))


@dataclass(frozen=True)
class Probe:
    lengths: tuple[int, ...]
    t: int
    causal: bool
    device: torch.device

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, torch.tensor(self.lengths, device=ctx.device), self.t, causal=self.causal)
        return out.double() if isinstance(out, torch.Tensor) else None

    def expected(self, variant: Variant):
        return reference(self.lengths, self.t, self.causal, variant, self.device).double()


class PaddingTask:
    name = "padding"

    def checks(self, ctx: Context) -> list[CheckDef]:
        lengths = torch.tensor((5, 1, 3), device=ctx.device)
        return [
            CheckDef("shape.basic", "shape", partial(shape_check, ctx, (5, 1, 3), 5, False)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, (1, 1), 1, False)),
            CheckDef("shape.causal", "shape", partial(shape_check, ctx, (2, 4), 6, True)),
            CheckDef("numerical.padding", "numerical", partial(exact_check, ctx, False)),
            CheckDef("numerical.causal", "numerical", partial(exact_check, ctx, True)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("mask-leak.padding", "mask-leak", partial(leak_check, ctx, False)),
            CheckDef("mask-leak.causal", "mask-leak", partial(leak_check, ctx, True)),
            CheckDef("stability.no-empty-row", "stability", partial(empty_rows_check, ctx, False)),
            CheckDef("stability.no-empty-row-causal", "stability", partial(empty_rows_check, ctx, True)),
            CheckDef(
                "robustness.no-mutation",
                "robustness",
                partial(no_mutation_check, ctx, lambda: ctx.call(ctx.entry, lengths, 5, causal=True), {"lengths": lengths}),
            ),
            CheckDef("robustness.varying-length", "robustness", partial(varying_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe((6, 2, 4), 6, causal, ctx.device) for causal in (False, True)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = PaddingTask()
