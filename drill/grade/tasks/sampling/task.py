"""The ``sampling`` task: ``filter_logits(logits, temperature, top_k, top_p)`` and ``sample(logits, generator)``.

filter_logits is deterministic, so it is graded exactly: the set of kept tokens must equal the
reference's on every row, and the kept values (logits / temperature) follow the tolerance rule.
The judge's inputs keep every cumulative probability at least MARGIN away from top_p, so no
rounding of the user's dtype can move a token across the threshold. sample is random: it is
graded by the distribution it induces, many rows drawn with one seeded generator and a
chi-square test per distribution, and by drawing the same ids again from the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.grade.user.wire import Generator
from drill.text.messages import Ev

MARGIN = 1e-3  # no cumulative probability this close to top_p in the judge's inputs
P_VALUE = 1e-6  # a correct sampler fails a distribution with this probability
ENTRY_SAMPLE = "sample"


@dataclass(frozen=True)
class Variant:
    crossing: bool = True  # top-p keeps the token that crosses the threshold
    descending: bool = True  # top-p sorts from the most probable token
    temperature_first: bool = True  # divide by the temperature before the cuts
    topk_dim: int = -1  # the dim top-k ranks over


def filter_reference(logits, temperature=1.0, top_k=0, top_p=1.0, variant: Variant = Variant()):
    """The contract, computed in logits' dtype (float64 for the truth)."""
    x = logits / temperature if variant.temperature_first else logits
    if top_k > 0:
        k = min(top_k, x.shape[variant.topk_dim])
        kth = x.topk(k, dim=variant.topk_dim).values.narrow(variant.topk_dim, k - 1, 1)
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        ordered, index = probs.sort(dim=-1, descending=variant.descending)
        cumulative = ordered.cumsum(dim=-1)
        remove = (cumulative > top_p) if not variant.crossing else (cumulative - ordered >= top_p)
        remove[..., 0] = False
        x = x.masked_fill(remove.scatter(-1, index, remove), float("-inf"))
    return x if variant.temperature_first else x / temperature


def margin(logits, temperature, top_k, top_p) -> float:
    """How close any cumulative probability of the top-p cut comes to top_p (inf when top-p is off)."""
    if top_p >= 1.0:
        return float("inf")
    x = filter_reference(logits.double(), temperature, top_k)
    ordered = torch.softmax(x, dim=-1).sort(dim=-1, descending=True).values
    return (ordered.cumsum(dim=-1) - top_p).abs().min().item()


def safe_logits(ctx: Context, shape, offset: int, temperature, top_k, top_p, scale=2.0) -> torch.Tensor:
    """float64 logits whose top-p cut no rounding can move (the first seed that keeps MARGIN)."""
    for attempt in range(100):
        logits = scale * ctx.randn(*shape, gen=ctx.generator(offset * 100 + attempt), dtype=torch.float64)
        if margin(logits, temperature, top_k, top_p) > MARGIN:
            return logits
    raise AssertionError("no safe logits")  # pragma: no cover - 100 seeds never all fail


def run_filter(ctx: Context, logits, *args, **kwargs):
    out = ctx.call(ctx.entry, logits, *args, **kwargs)
    if not isinstance(out, torch.Tensor):
        raise WrongShape(Ev("filter_logits returned {type}, not a tensor", type=type(out).__name__))
    expect_shape(out, logits.shape)
    return out


def kept_mismatch(out: torch.Tensor, truth: torch.Tensor) -> Ev | None:
    """The first row whose kept set differs from the reference's, in words."""
    out = out.detach()
    if torch.isnan(out).any():
        return Ev("the output has NaN at {at}", at=[int(i) for i in torch.isnan(out).nonzero()[0]])
    values, want = out.reshape(-1, out.shape[-1]), (truth != float("-inf")).reshape(-1, truth.shape[-1])
    for row, (value, wanted) in enumerate(zip(values, want)):
        got = value != float("-inf")
        if torch.equal(got, wanted):
            continue
        extra, missing = (got & ~wanted).nonzero().flatten().tolist(), (wanted & ~got).nonzero().flatten().tolist()
        parts = ([Ev("keeps {ids}, which the contract removes", ids=extra)] if extra else []) + (
            [Ev("removes {ids}, which it keeps", ids=missing)] if missing else [])
        text = Ev("row {row}: kept tokens {kept}, expected {expected} ({why})", row=row, kept=got.nonzero().flatten().tolist(),
                  expected=wanted.nonzero().flatten().tolist(), why=Ev.seq(parts))  # fmt: skip
        filled = value[got & ~wanted]
        if filled.numel() and filled.max() < -1e4:
            text = Ev("{what}: removed tokens must be exactly -inf, not {value:.3g}", what=text, value=filled.max().item())
        return text
    return None


def filter_check(ctx: Context, shape, offset: int, temperature=1.0, top_k=0, top_p=1.0, dtype=torch.float32, scale=2.0):
    logits = safe_logits(ctx, shape, offset, temperature, top_k, top_p, scale)
    kwargs = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
    out = run_filter(ctx, logits.to(dtype).clone(), **kwargs)  # clone: a call copies in-place changes back
    if out.dtype != dtype:
        return outcome("fail", Ev("output dtype is {dtype}, the input's is {expected}", dtype=str(out.dtype), expected=str(dtype)))
    truth = filter_reference(logits.to(dtype).double(), temperature, top_k, top_p)
    problem = kept_mismatch(out, truth)
    if problem:
        return outcome("fail", problem)
    kept = truth != float("-inf")
    same = filter_reference(logits.to(dtype), temperature, top_k, top_p)
    result = against_truth([(Ev("kept logits"), out.detach()[kept], truth[kept], same[kept])])
    if result.status == "pass":
        result.message = Ev("kept set exact ({kept} of {n} tokens); values: {what}", kept=int(kept.sum()), n=kept.numel(),
                            what=result.message)  # fmt: skip
    return result


def drawn_check(ctx: Context):
    """filter_logits on a [B, T, V] batch (V never a fixed check's) and a temperature, top_k and top_p drawn from the seed."""
    b, t, vocab, top_k = ctx.sizes(300, (2, 4), (3, 6), (13, 40), (2, 11), avoid=(16,))
    tenths, percent = ctx.sizes(301, (5, 20), (50, 95))
    kwargs = {"temperature": tenths / 10, "top_k": top_k, "top_p": percent / 100}
    result = filter_check(ctx, (b, t, vocab), 11, **kwargs)
    given = ", ".join(f"{k}={v:g}" for k, v in kwargs.items())
    result.message = Ev("a configuration drawn from the seed (shape {shape}, {given}): {what}", shape=[b, t, vocab], given=given,
                        what=result.message)  # fmt: skip
    return result


def shape_check(ctx: Context, shape, dtype):
    logits = ctx.randn(*shape, gen=ctx.generator(7), dtype=dtype)
    out = run_filter(ctx, logits, temperature=0.8, top_k=3, top_p=0.9)
    if out.dtype != dtype or out.device != logits.device:
        return outcome("fail", Ev("output is {dtype} on {device}, the input {expected} on {expected_device}", dtype=str(out.dtype),
                                  device=str(out.device), expected=str(dtype), expected_device=str(logits.device)))  # fmt: skip
    return outcome("pass", Ev("output {shape}, {dtype}", shape=list(out.shape), dtype=str(dtype)[6:]))


# --- sample -------------------------------------------------------------------------


def sampler(ctx: Context):
    handle = ctx.user.entry(ENTRY_SAMPLE)
    if handle is None:
        raise UserCodeError(Ev("the file does not define sample(logits, generator)"), "not-implemented")
    return handle


def draw(ctx: Context, logits, seed: int) -> torch.Tensor:
    ids = ctx.call(sampler(ctx), logits, Generator(seed, str(logits.device) if logits.is_cuda else "cpu"))
    if not isinstance(ids, torch.Tensor):
        raise WrongShape(Ev("sample returned {type}, not a tensor of token ids", type=type(ids).__name__))
    expect_shape(ids, logits.shape[:-1], Ev("sample's ids (the leading dims of logits; squeeze the last dim of multinomial)"))
    if ids.dtype != torch.int64:
        raise WrongShape(Ev("sample's ids are {dtype}, expected torch.int64", dtype=str(ids.dtype)))
    if ids.numel() and (ids.min() < 0 or ids.max() >= logits.shape[-1]):
        raise WrongShape(Ev("sample returned ids outside 0..{last}", last=logits.shape[-1] - 1))
    return ids


def distributions(ctx: Context, offset: int, rows: int = 3, vocab: int = 6):
    """Logits of ``rows`` distributions whose every token is drawn at least 5% of the time."""
    for attempt in range(100):
        logits = 0.6 * ctx.randn(rows, vocab, gen=ctx.generator(offset * 100 + attempt), dtype=torch.float64)
        if torch.softmax(logits, -1).min() > 0.05:
            return logits
    raise AssertionError("no distribution")  # pragma: no cover


def chi_square_p(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """P(X >= statistic) for a chi-square with (support - 1) degrees of freedom."""
    support = probs > 0
    expected = probs[support] * counts.sum()
    stat = ((counts[support] - expected) ** 2 / expected).sum()
    df = int(support.sum()) - 1
    return torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), stat / 2).item() if df > 0 else 1.0


def distribution_check(ctx: Context, draws: int = 4000):
    logits = distributions(ctx, 30)
    rows, vocab = logits.shape
    ids = draw(ctx, logits.float().repeat_interleave(draws, 0).reshape(rows, draws, vocab), seed=11)
    probs = torch.softmax(logits, -1).cpu()
    worst = 1.0
    for r in range(rows):
        counts = torch.bincount(ids[r].cpu(), minlength=vocab).double()
        p = chi_square_p(counts, probs[r])
        if p < P_VALUE:
            freq = ", ".join(f"{c / draws:.3f}" for c in counts.tolist())
            want = ", ".join(f"{x:.3f}" for x in probs[r].tolist())
            return outcome("fail", Ev("distribution {r}: {draws} draws give frequencies [{freq}], softmax(logits) is [{want}] "
                                      "(chi-square p = {p:.2g})", r=r, draws=draws, freq=freq, want=want, p=p), "sample-wrong-distribution")  # fmt: skip
        worst = min(worst, p)
    return outcome("pass", Ev("{rows} distributions x {draws} draws match softmax(logits) (smallest chi-square p = {p:.2g})",
                              rows=rows, draws=draws, p=worst))  # fmt: skip


def removed_never_drawn_check(ctx: Context, draws: int = 2000):
    logits = distributions(ctx, 40, rows=2, vocab=8).float()
    logits[0, [1, 4, 5]] = float("-inf")
    logits[1, :7] = float("-inf")
    ids = draw(ctx, logits.repeat_interleave(draws, 0).reshape(2, draws, 8), seed=12)
    for r in range(2):
        bad = [t for t in ids[r].unique().tolist() if logits[r, t] == float("-inf")]
        if bad:
            return outcome("fail", Ev("row {r}: drew token {token}, whose logit is -inf (removed by filter_logits)", r=r, token=bad[0]))
    return outcome("pass", Ev("{n} draws never pick a token whose logit is -inf", n=2 * draws))


def generator_check(ctx: Context):
    logits = ctx.randn(64, 6, gen=ctx.generator(50))
    first, again, other = draw(ctx, logits, 21), draw(ctx, logits, 21), draw(ctx, logits, 22)
    if not torch.equal(first, again):
        return outcome("fail", Ev("two calls with generators seeded alike draw different ids: sample must draw from "
                                  "`generator`, not torch's global random state"), "sample-ignores-generator")  # fmt: skip
    if torch.equal(first, other):
        return outcome("fail", Ev("generators seeded differently draw the same 64 ids: is sample random at all?"),
                       "sample-wrong-distribution")  # fmt: skip
    return outcome("pass", Ev("the same seed draws the same ids, another seed other ids"))


@dataclass(frozen=True)
class Probe:
    logits: torch.Tensor
    temperature: float
    top_k: int
    top_p: float

    @staticmethod
    def encode(out: torch.Tensor) -> torch.Tensor:
        kept = out != float("-inf")
        return torch.cat([kept.double(), torch.where(kept, out.double(), 0.0)], dim=-1)

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.logits.clone(), temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)
        return self.encode(out.detach()) if isinstance(out, torch.Tensor) and out.shape == self.logits.shape else None

    def expected(self, variant):
        variant = variant if isinstance(variant, Variant) else Variant()  # the engine's baseline means "correct"
        return self.encode(filter_reference(self.logits, self.temperature, self.top_k, self.top_p, variant))


HYPOTHESES = (
    ("top-p-drops-crossing-token", Variant(crossing=False)),
    ("top-p-ascending-sort", Variant(descending=False)),
    ("temperature-after-top-p", Variant(temperature_first=False)),
    ("top-k-wrong-dim", Variant(topk_dim=0)),
)


class SamplingTask:
    name = "sampling"

    def checks(self, ctx: Context) -> list[CheckDef]:
        f = partial(filter_check, ctx)
        x = ctx.randn(4, 10, gen=ctx.generator(8))
        return [
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (4, 10), torch.float32)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, (2, 3, 9), torch.float32)),
            CheckDef("shape.1d", "shape", partial(shape_check, ctx, (11,), torch.float32)),
            CheckDef("shape.float64", "shape", partial(shape_check, ctx, (3, 7), torch.float64)),
            CheckDef("numerical.temperature", "numerical", partial(f, (5, 12), 1, temperature=0.7)),
            CheckDef("numerical.top-k", "numerical", partial(f, (5, 12), 2, top_k=4)),
            CheckDef("numerical.top-p", "numerical", partial(f, (6, 12), 3, top_p=0.8)),
            CheckDef("numerical.combined", "numerical", partial(f, (2, 4, 16), 4, temperature=1.3, top_k=6, top_p=0.75)),
            CheckDef("numerical.top-p-tiny", "numerical", partial(f, (5, 12), 5, top_p=1e-9)),
            CheckDef("numerical.top-k-1", "numerical", partial(f, (5, 12), 6, temperature=0.5, top_k=1, top_p=0.5)),
            CheckDef("numerical.float64", "numerical", partial(f, (4, 12), 7, temperature=0.9, top_k=8, top_p=0.9, dtype=torch.float64)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.sample-distribution", "numerical", partial(distribution_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(f, (4, 12), 8, top_p=0.95, scale=1e3)),
            CheckDef("stability.low-temperature", "stability", partial(f, (4, 12), 9, temperature=0.01, top_p=0.9)),
            CheckDef("mask-leak.removed-never-drawn", "mask-leak", partial(removed_never_drawn_check, ctx)),
            CheckDef("robustness.top-k-above-vocab", "robustness", partial(f, (3, 5), 10, top_k=50)),
            CheckDef("robustness.sample-uses-generator", "robustness", partial(generator_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run_filter(ctx, x, temperature=0.5, top_k=3, top_p=0.8), {"logits": x})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [
            Probe(safe_logits(ctx, (6, 10), 20, 0.6, 0, 0.7), 0.6, 0, 0.7),
            Probe(safe_logits(ctx, (6, 10), 21, 1.0, 3, 1.0), 1.0, 3, 1.0),
            Probe(safe_logits(ctx, (6, 10), 22, 1.5, 6, 0.85), 1.5, 6, 0.85),
        ]

    def hypotheses(self, ctx: Context):
        return list(HYPOTHESES)


TASK = SamplingTask()
