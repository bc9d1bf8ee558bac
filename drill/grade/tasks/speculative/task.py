"""The ``speculative`` task: ``speculative_accept(draft_tokens, draft_probs, target_probs, uniforms) -> tokens``.

Speculative sampling's verification step (Leviathan et al. 2023, Chen et al. 2023), with the
randomness passed in: every decision is a comparison against a given uniform, so the output is a
function of the inputs and is graded exactly. The judge keeps every uniform at least MARGIN away
from the acceptance ratio and from every cumulative probability it is compared with, so no
rounding of the user's dtype can flip a decision. The theorem itself is checked too: over many
trials with drafts drawn from q and fresh uniforms, the first emitted token must follow p.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import no_mutation_check
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.text.messages import Ev

MARGIN = 1e-4
P_VALUE = 1e-6
TRIALS = 300


@dataclass(frozen=True)
class Variant:
    draw: bool = True  # accept a draft with p < q with probability p / q (False: reject it outright)
    inverted: bool = False  # the ratio q / p
    stop: bool = True  # stop after the first rejection
    bonus_any: bool = False  # with stop=False: the bonus is added even after a rejection (the loop always ran to its end)
    bonus: bool = True  # add a token from target_probs[gamma] when every draft is accepted
    resample: bool = True  # at the rejection, emit the token drawn from the residual (False: stop with the accepted ones)


def inverse_cdf(probs: torch.Tensor, u: float) -> int:
    """The first index whose cumulative probability exceeds u (the last non-zero one if rounding leaves none)."""
    above = (probs.cumsum(0) > u).nonzero()
    return int(above[0]) if len(above) else int(probs.nonzero()[-1])


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    r = (p - q).clamp(min=0)
    return r / r.sum()


def accept_reference(draft, q, p, u, variant: Variant = Variant()):
    """(tokens, decisions): decisions[i] = (kind, threshold, uniform) of each step taken, for the messages."""
    out, steps, gamma = [], [], len(draft)
    rejected = False
    for i in range(gamma):
        x = int(draft[i])
        pi, qi = float(p[i, x]), float(q[i, x])
        if not variant.draw:
            ok = pi >= qi
            ratio = 1.0 if ok else 0.0
        else:
            ratio = min(1.0, (qi / pi if pi > 0 else float("inf")) if variant.inverted else (pi / qi if qi > 0 else float("inf")))
            ok = float(u[i]) < ratio
        steps.append(("accept" if ok else "reject", i, x, ratio, float(u[i])))
        if ok:
            out.append(x)
            continue
        if variant.resample:
            out.append(inverse_cdf(residual(p[i], q[i]), float(u[i + 1])))
        rejected = True
        if variant.stop:
            break
    if (not rejected or variant.bonus_any) and variant.bonus:
        out.append(inverse_cdf(p[gamma], float(u[gamma])))
    return out, steps


def margin(draft, q, p, u) -> float:
    """How close any uniform comes to what the correct algorithm compares it with."""
    closest = float("inf")
    gamma = len(draft)
    for i in range(gamma):
        x = int(draft[i])
        ratio = min(1.0, float(p[i, x] / q[i, x]))
        closest = min(closest, abs(float(u[i]) - ratio) if ratio < 1 else 1.0)
        closest = min(closest, (residual(p[i], q[i]).cumsum(0) - u[i + 1]).abs().min().item() if (p[i] > q[i]).any() else 1.0)
    closest = min(closest, (p[gamma].cumsum(0) - u[gamma]).abs().min().item())
    return closest


def normalised(x: torch.Tensor) -> torch.Tensor:
    return x / x.sum(-1, keepdim=True)


@dataclass(frozen=True)
class Case:
    draft: torch.Tensor  # [gamma] int64
    q: torch.Tensor  # [gamma, V] float64
    p: torch.Tensor  # [gamma + 1, V] float64
    u: torch.Tensor  # [gamma + 1] float64


def make_case(ctx: Context, offset: int, gamma: int, vocab: int, want: str | None = None, sharp: float = 1.5) -> Case:
    """A random case whose decisions no rounding can flip; ``want`` = "all" (every draft accepted)
    or "reject@i" picks the first seed that produces that path."""
    for attempt in range(500):
        gen = ctx.generator(offset * 1000 + attempt)
        q = normalised(torch.exp(sharp * torch.randn(gamma, vocab, generator=gen, dtype=torch.float64)))
        p = normalised(torch.exp(sharp * torch.randn(gamma + 1, vocab, generator=gen, dtype=torch.float64)))
        draft = torch.multinomial(q, 1, generator=gen).flatten()
        u = torch.rand(gamma + 1, generator=gen, dtype=torch.float64)
        case = Case(draft, q, p, u)
        if margin(draft, q, p, u) <= MARGIN:
            continue
        tokens, steps = accept_reference(draft, q, p, u)
        path = "all" if all(s[0] == "accept" for s in steps) else f"reject@{len(steps) - 1}"
        if want is None or path == want:
            return case
    raise AssertionError(f"no case for {want}")  # pragma: no cover


def tokens_of(value) -> list[int]:
    if isinstance(value, torch.Tensor):
        if value.dim() != 1 or value.dtype.is_floating_point or value.dtype == torch.bool:
            raise WrongShape(Ev("returned a {dtype} tensor of shape {shape}, expected 1-D integer token ids", dtype=str(value.dtype),
                                shape=list(value.shape)))  # fmt: skip
        return [int(t) for t in value.tolist()]
    if isinstance(value, (list, tuple)) and all(type(t) is int for t in value):
        return list(value)
    raise WrongShape(Ev("returned {type}, expected a 1-D int64 tensor (or a list) of token ids", type=type(value).__name__))


def _sent(ctx: Context, case: Case, dtype) -> tuple:
    dev = ctx.device  # copies: in-place changes come back, the case must not change
    return tuple(t.clone() for t in (case.draft.to(dev), case.q.to(dev, dtype), case.p.to(dev, dtype), case.u.to(dev, dtype)))


def _tokens(case: Case, value) -> list[int]:
    tokens = tokens_of(value)
    if not 1 <= len(tokens) <= len(case.draft) + 1:
        raise WrongShape(too_many(tokens, case))
    return tokens


def too_many(tokens: list[int], case: Case) -> Ev:
    return Ev("returned {n} tokens; gamma = {gamma} drafts give 1 to {most}", n=len(tokens), gamma=len(case.draft), most=len(case.draft) + 1)


def run(ctx: Context, case: Case, dtype=torch.float32) -> list[int]:
    return _tokens(case, ctx.call(ctx.entry, *_sent(ctx, case, dtype)))


def run_each(ctx: Context, cases: list[Case]) -> list[list[int]]:
    """The tokens of every case, from one round trip to the user side."""
    values = ctx.call_each(ctx.entry, [_sent(ctx, case, torch.float32) for case in cases])
    return [_tokens(case, value) for case, value in zip(cases, values)]


def explain(case: Case, got: list[int], want: list[int]) -> Ev:
    head = Ev("expected tokens {want}, got {got}", want=want, got=got)
    return Ev("{label}: {what}", label=head, what=why(case, got, want))


def why(case: Case, got: list[int], want: list[int]) -> Ev:
    steps = accept_reference(case.draft, case.q, case.p, case.u)[1]
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if at < len(steps):
        kind, i, x, ratio, u = steps[at]
        p, q = float(case.p[i, x]), float(case.q[i, x])
        if kind == "accept":
            return Ev("draft {i} (token {x}) must be accepted: u = {u:.4f} < min(1, p/q) = min(1, {p:.4f}/{q:.4f})", i=i, x=x, u=u, p=p, q=q)
        if at < len(got) and got[at] == x:
            return Ev("draft {i} (token {x}) must be rejected (u = {u:.4f} >= p/q = {p:.4f}/{q:.4f} = {ratio:.4f}), and the token drawn "
                      "instead comes from norm(max(0, p - q)), where token {x} has probability 0",
                      i=i, x=x, u=u, p=p, q=q, ratio=ratio)  # fmt: skip
        return Ev("after rejecting draft {i}, the token is drawn from norm(max(0, p - q)) by inverse CDF with uniforms[{next}] = {u:.4f}",
                  i=i, next=i + 1, u=float(case.u[i + 1]))  # fmt: skip
    gamma = len(case.draft)
    if at >= len(got):
        return Ev("every draft was accepted, so a bonus token from target_probs[{gamma}] comes last", gamma=gamma)
    if at >= len(want):
        return Ev("nothing comes after the token drawn at a rejection")
    return Ev("the bonus token is drawn from target_probs[{gamma}] with uniforms[{gamma}] = {u:.4f}", gamma=gamma, u=float(case.u[-1]))


def shape_check(ctx: Context, case: Case):
    dev = ctx.device
    value = ctx.call(ctx.entry, case.draft.to(dev), case.q.to(dev, torch.float32), case.p.to(dev, torch.float32), case.u.to(dev, torch.float32))
    tokens = tokens_of(value)
    if isinstance(value, torch.Tensor) and (value.dtype != torch.int64 or value.device != case.draft.to(dev).device):
        return outcome("fail", Ev("tokens are {dtype} on {device}; expected int64 on {want}, like draft_tokens", dtype=str(value.dtype),
                                  device=str(value.device), want=str(dev)))  # fmt: skip
    if not 1 <= len(tokens) <= len(case.draft) + 1:
        return outcome("fail", too_many(tokens, case))
    if isinstance(value, torch.Tensor):
        return outcome("pass", Ev("{n} token ids, int64 tensor", n=len(tokens)))
    return outcome("pass", Ev("{n} token ids, {type}", n=len(tokens), type=type(value).__name__))


def exact_check(ctx: Context, case: Case, dtype=torch.float32):
    want, steps = accept_reference(case.draft, case.q, case.p, case.u)
    got = run(ctx, case, dtype)
    if got != want:
        return outcome("fail", explain(case, got, want))
    path = Ev("every draft accepted + bonus") if len(want) == len(case.draft) + 1 else Ev("rejection at draft {i}", i=len(steps) - 1)
    return outcome("pass", Ev("tokens {got} exact ({path})", got=got, path=path))


def drawn_check(ctx: Context):
    """gamma and the vocabulary drawn from the seed (never a fixed check's): one case on any path, then one
    where every draft is accepted, so the bonus token is read at the drawn gamma too."""
    gamma, vocab = ctx.sizes(70, (2, 9), (9, 30), avoid=(3, 4, 5, 10, 12))
    messages = []
    for offset, want, sharp in ((71, None, 1.5), (72, "all", 0.3)):
        result = exact_check(ctx, make_case(ctx, offset, gamma, vocab, want, sharp))
        messages.append(result.message)
        if result.status != "pass":
            break
    drawn = Ev("a configuration drawn from the seed (gamma={gamma}, V={vocab})", gamma=gamma, vocab=vocab)
    result.message = Ev("{label}: {what}", label=drawn, what=Ev.seq(messages))
    return result


def residual_check(ctx: Context):
    """p(x0) = 0 forces a rejection: the resampled token must follow norm(max(0, p - q)) over a grid of uniforms."""
    q = torch.tensor([[0.4, 0.1, 0.2, 0.1, 0.1, 0.1]], dtype=torch.float64)
    p = torch.tensor([[0.0, 0.3, 0.1, 0.3, 0.1, 0.2], [0.1, 0.2, 0.3, 0.2, 0.1, 0.1]], dtype=torch.float64)
    base = Case(torch.tensor([0]), q, p, torch.zeros(2, dtype=torch.float64))  # residual [0, .4, 0, .4, 0, .2]
    r = residual(p[0], q[0]).cumsum(0)
    grid = [float(v) for v in torch.linspace(0.02, 0.98, 13, dtype=torch.float64) if (r - v).abs().min() > MARGIN]
    cases = [Case(base.draft, q, p, torch.tensor([0.5, value], dtype=torch.float64)) for value in grid]
    outputs = [run(ctx, case) for case in cases]
    if all(got[:1] == [0] for got in outputs):  # the draft token whatever uniforms[1]: accepted, a ratio mistake
        return outcome("fail", Ev("p(draft token 0) = 0 must reject it whatever the uniform (uniforms[0] = 0.5); got {got}", got=outputs[0]))
    for value, case, got in zip(grid, cases, outputs):
        want = accept_reference(case.draft, q, p, case.u)[0]
        if len(got) != 1:
            return outcome("fail", Ev("p(draft token) = 0 must reject it and emit one resampled token; got {got}", got=got))
        if got != want:
            mass = ", ".join(f"{v:.3f}" for v in residual(p[0], q[0]).tolist())
            return outcome("fail", Ev("rejected draft, uniforms[1] = {u:.3f}: expected token {want}, got {got}: the resample must use "
                                      "norm(max(0, p - q)) = [{mass}] by inverse CDF", u=value, want=want[0], got=got[0], mass=mass),
                           "spec-residual-wrong")  # fmt: skip
    return outcome("pass", Ev("{n} resamples after a forced rejection follow norm(max(0, p - q))", n=len(grid)))


def trials(ctx: Context, p, q, gamma: int, count: int, offset: int):
    gen = ctx.generator(offset)
    for _ in range(count):
        draft = torch.multinomial(q, 1, generator=gen).flatten()
        yield Case(draft, q, p, torch.rand(gamma + 1, generator=gen, dtype=torch.float64))


def chi_square_p(counts: torch.Tensor, probs: torch.Tensor) -> float:
    support = probs > 0
    expected = probs[support] * counts.sum()
    stat = ((counts[support] - expected) ** 2 / expected).sum()
    df = int(support.sum()) - 1
    return torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), stat / 2).item() if df > 0 else 1.0


def distribution_check(ctx: Context, gamma: int = 2, vocab: int = 4):
    """The theorem: whatever q is, the first emitted token is distributed as p[0]."""
    gen = ctx.generator(80)
    q = normalised(torch.exp(1.2 * torch.randn(gamma, vocab, generator=gen, dtype=torch.float64)))
    p = normalised(0.2 + torch.rand(gamma + 1, vocab, generator=gen, dtype=torch.float64))
    counts = torch.zeros(vocab, dtype=torch.float64)
    for tokens in run_each(ctx, list(trials(ctx, p, q, gamma, TRIALS, 81))):
        counts[tokens[0]] += 1
    value = chi_square_p(counts, p[0])
    if value < P_VALUE:
        freq = ", ".join(f"{c / TRIALS:.3f}" for c in counts.tolist())
        want = ", ".join(f"{x:.3f}" for x in p[0].tolist())
        return outcome("fail", Ev("over {trials} trials the first token has frequencies [{freq}], the target p is [{want}] (chi-square "
                                  "p = {p:.2g}): the output does not follow the target distribution", trials=TRIALS, freq=freq,
                                  want=want, p=value))  # fmt: skip
    return outcome("pass", Ev("{trials} trials with drafts from q: the first token follows p (chi-square p = {p:.2g})", trials=TRIALS, p=value))


def zero_probability_check(ctx: Context, gamma: int = 2, vocab: int = 6, count: int = 40):
    """Tokens the target gives probability 0 are never emitted, however much the draft likes them."""
    gen = ctx.generator(90)
    q = normalised(torch.rand(gamma, vocab, generator=gen, dtype=torch.float64) + 0.1)
    q[:, :2] *= 8
    q = normalised(q)
    p = normalised(torch.rand(gamma + 1, vocab, generator=gen, dtype=torch.float64) + 0.1)
    p[:, :2] = 0.0
    p = normalised(p)
    for n, case in enumerate(trials(ctx, p, q, gamma, count, 91)):
        got = run(ctx, case)
        bad = [(i, t) for i, t in enumerate(got) if p[i, t] == 0]
        if bad:
            i, t = bad[0]
            return outcome("fail", Ev("trial {n}: emitted token {t} at position {i}, where the target's probability is 0 (tokens {got})",
                                      n=n, t=t, i=i, got=got))  # fmt: skip
    return outcome("pass", Ev("{n} trials never emit a token the target gives probability 0", n=count))


def small_residual_case(ctx: Context) -> Case:
    """p and q differ by ~1e-3 on two tokens: the residual is two tiny masses, normalised."""
    for attempt in range(200):
        gen = ctx.generator(60_000 + attempt)
        q = normalised(torch.rand(1, 6, generator=gen, dtype=torch.float64) + 0.2)
        p = torch.cat([q, normalised(torch.rand(1, 6, generator=gen, dtype=torch.float64))])
        p[0, 0] += 1e-3
        p[0, 1] += 2e-3
        p[0, 2] -= 3e-3
        case = Case(torch.tensor([2]), q, p, torch.tensor([0.9999, float(torch.rand(1, generator=gen))], dtype=torch.float64))
        if margin(case.draft, q, p, case.u) > MARGIN:
            return case
    raise AssertionError("no small-residual case")  # pragma: no cover


@dataclass(frozen=True)
class Probe:
    case: Case

    def encode(self, tokens) -> torch.Tensor:
        gamma = len(self.case.draft)
        return torch.tensor([len(tokens), *tokens, *[-1] * (gamma + 1 - len(tokens))][: gamma + 2], dtype=torch.float64)

    def user(self, ctx: Context):
        return self.encode(tokens_of(ctx.call(ctx.entry, *_sent(ctx, self.case, torch.float64))))  # no token is evidence too

    def expected(self, variant):
        variant = variant if isinstance(variant, Variant) else Variant()  # the engine's baseline means "correct"
        return self.encode(accept_reference(self.case.draft, self.case.q, self.case.p, self.case.u, variant)[0])


HYPOTHESES = (
    ("spec-rejects-without-drawing", Variant(draw=False)),
    ("spec-ratio-inverted", Variant(inverted=True)),
    ("spec-no-stop-after-rejection", Variant(stop=False)),
    ("spec-no-stop-after-rejection", Variant(stop=False, bonus_any=True)),
    ("spec-no-resample", Variant(resample=False)),
    ("spec-bonus-missing", Variant(bonus=False)),
)


class SpeculativeTask:
    name = "speculative"
    implies = {"spec-no-resample": {"wrong-output-shape"}}  # a rejection at draft 0 then returns no token at all

    def checks(self, ctx: Context) -> list[CheckDef]:
        c = partial(make_case, ctx)
        keep = c(5, 3, 7)
        named = {"draft_tokens": keep.draft, "draft_probs": keep.q.float(), "target_probs": keep.p.float(), "uniforms": keep.u.float()}
        call = lambda: ctx.call(ctx.entry, *named.values())  # noqa: E731
        return [
            CheckDef("shape.tokens", "shape", partial(shape_check, ctx, c(1, 3, 8))),
            CheckDef("numerical.all-accepted", "numerical", partial(exact_check, ctx, c(2, 3, 8, "all", sharp=0.3))),
            CheckDef("numerical.reject-first", "numerical", partial(exact_check, ctx, c(3, 4, 8, "reject@0"))),
            CheckDef("numerical.reject-middle", "numerical", partial(exact_check, ctx, c(4, 4, 8, "reject@2"))),
            CheckDef("numerical.reject-last", "numerical", partial(exact_check, ctx, c(6, 3, 8, "reject@2"))),
            CheckDef("numerical.gamma-1", "numerical", partial(exact_check, ctx, c(7, 1, 10))),
            CheckDef("numerical.float64", "numerical", partial(exact_check, ctx, c(8, 5, 12), torch.float64)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            CheckDef("numerical.residual", "numerical", partial(residual_check, ctx)),
            CheckDef("numerical.target-distribution", "numerical", partial(distribution_check, ctx)),
            CheckDef("stability.small-residual", "stability", partial(exact_check, ctx, small_residual_case(ctx), torch.float64)),
            CheckDef("mask-leak.zero-probability", "mask-leak", partial(zero_probability_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx, call, named)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(make_case(ctx, 10 + i, 4, 6, want)) for i, want in enumerate(("all", "reject@0", "reject@1", "reject@3", None))] + [
            Probe(make_case(ctx, 20 + i, 3, 5, sharp=0.2)) for i in range(4)
        ]

    def hypotheses(self, ctx: Context):
        return list(HYPOTHESES)


TASK = SpeculativeTask()
