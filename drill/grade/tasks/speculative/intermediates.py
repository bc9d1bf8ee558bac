"""What ``drill grade --trace`` compares the user's speculative_accept against: per draft, target_probs[i, x_i],
draft_probs[i, x_i], p/q, min(1, p/q) and the uniform; the same for every draft at once (vectorised code);
at the rejection target_probs[i] and draft_probs[i], p - q, the residual max(0, p - q), normalised, its sum,
its CDF and the token drawn (exactly, an integer); else the bonus token's CDF over target_probs[gamma].

The fixed input accepts draft 0 by its uniform (p < q), draft 1 (p > q), rejects draft 2 and has a draft 3
after it, so the ratio, the residual and code that goes on after the rejection show there. Its accept
decisions are bools, which the trace leaves out: True or False is any decision, and would vouch for
whatever computed it. The stress input, traced when a check failed but the fixed one traced clean, accepts
every draft and draws the bonus; there every step is compared exactly (the decisions, the tokens, the list
of Python ints the code returns), so a missing bonus is named where the tokens are returned.
Code in plain Python floats (tolist) has no tensor step to name but, on the stress input, the tokens it returns."""

from __future__ import annotations

import torch

from drill.grade.tasks.speculative.task import accept_reference, normalised, residual
from drill.grade.trace_match import Case
from drill.text.messages import Ev

GAMMA, VOCAB = 4, 6  # [gamma], [gamma + 1] and VOCAB pairwise different
# Draft 0 accepted with p < q (0.27 / 0.45 = 0.6 > u 0.31), draft 1 with p > q (0.35 / 0.15), draft 2 rejected
# (0.08 / 0.5 = 0.16 <= u 0.67): max(0, p - q) = [.07, .2, 0, .2, 0, 0], u 0.62 draws token 3; draft 3 (0.26 / 0.3)
# would be accepted. Every wrong route draws another token than 3 or 1 (1 is 1.0 = min(1, p/q) at draft 1): rejecting
# draft 0 draws 0, the unnormalised residual 5, |p - q| 5. Tokens [2, 4, 3]; every uniform >= 0.045 from its threshold.
REJECTION = (
    torch.tensor([2, 4, 5, 0]),
    torch.tensor([[0.1, 0.1, 0.45, 0.15, 0.1, 0.1], [0.2, 0.2, 0.15, 0.15, 0.15, 0.15],
                  [0.1, 0.05, 0.1, 0.15, 0.1, 0.5], [0.3, 0.1, 0.2, 0.1, 0.2, 0.1]], dtype=torch.float64),
    torch.tensor([[0.2, 0.25, 0.27, 0.08, 0.1, 0.1], [0.1, 0.15, 0.15, 0.1, 0.35, 0.15], [0.17, 0.25, 0.05, 0.35, 0.1, 0.08],
                  [0.26, 0.14, 0.2, 0.15, 0.15, 0.1], [0.1, 0.2, 0.3, 0.15, 0.15, 0.1]], dtype=torch.float64),
    torch.tensor([0.31, 0.23, 0.67, 0.62, 0.83], dtype=torch.float64),
)  # fmt: skip
INVERTED = Ev("q/p, not p/q: the ratio is inverted (p is the target's)")
ALL_ACCEPTED = 1876  # drafts [5, 1, 3, 2], ratios 0.356 (u = 0.303), 0.879, 0.868, > 1; tokens [5, 1, 3, 2, 3]


def inputs(seed: int):
    """Drafts from q with fresh uniforms (make_case's recipe, on a generator of its own); for ALL_ACCEPTED every uniform
    is at least 0.05 from what it is compared with and every scalar step at least 2e-3 from every other."""
    gen = torch.Generator().manual_seed(seed)
    q = normalised(torch.exp(1.2 * torch.randn(GAMMA, VOCAB, generator=gen, dtype=torch.float64)))
    p = normalised(torch.exp(1.2 * torch.randn(GAMMA + 1, VOCAB, generator=gen, dtype=torch.float64)))
    draft = torch.multinomial(q, 1, generator=gen).flatten()
    return draft, q, p, torch.rand(GAMMA + 1, generator=gen, dtype=torch.float64)


def case(ctx, given: tuple = REJECTION, exact: bool = False, label: Ev | None = None) -> Case:
    """``exact``: bools and the returned list count too. The order makes the latest match the right name where values
    coincide (True is also every all-True vector and 1.0; a token id but 0 is True), and the sum come after norm: the
    CDF of max(0, p - q) itself is then "norm expected after" the residual's line, a scale."""
    draft, q, p, u = given
    gamma = len(draft)
    tokens, decisions = accept_reference(draft, q, p, u)
    n = sum(kind == "accept" for kind, *_ in decisions)
    rows = torch.arange(gamma)
    pd, qd = p[rows, draft], q[rows, draft]
    ratio = pd / qd
    tests = u[:gamma] < ratio.clamp(max=1.0)
    dist = residual(p[n], q[n]) if n < gamma else p[gamma]
    cdf, uniform = dist.cumsum(0), u[min(n + 1, gamma)]
    steps = [("draft_tokens", draft), ("draft_probs", q), ("target_probs", p), (Ev("uniforms"), u)]
    if n < gamma:
        diff = p[n] - q[n]
        steps += [(f"target_probs[{n}]", p[n]), (f"draft_probs[{n}]", q[n]), (Ev("p - q at draft {n}", n=n), diff),
                  ("max(0, p - q)", diff.clamp(min=0)), (Ev("norm(max(0, p - q))"), dist),
                  (Ev("sum of max(0, p - q)"), diff.clamp(min=0).sum()), (Ev("CDF"), cdf)]  # fmt: skip
    else:
        steps += [(f"target_probs[{gamma}]", p[gamma]), (Ev("CDF"), cdf)]
    steps += [(Ev("p(x) of every draft"), pd), (Ev("q(x) of every draft"), qd), (Ev("p/q of every draft"), ratio),
              (Ev("min(1, p/q) of every draft"), ratio.clamp(max=1.0))]  # fmt: skip
    for i, x in enumerate(draft.tolist()):  # one draft at a time (a Python loop): 0-d steps, past the rejection too
        steps += [(f"target_probs[{i}, {x}]", pd[i]), (f"draft_probs[{i}, {x}]", qd[i]), (Ev("p/q at draft {i}", i=i), ratio[i]),
                  (Ev("min(1, p/q) at draft {i}", i=i), ratio[i].clamp(max=1.0))]  # fmt: skip
    steps += [(Ev("uniforms[{i}]", i=i), u[i]) for i in range(gamma + 1)]
    if exact:
        steps += [(Ev("accept tests of every draft"), tests), (Ev("accepted before the first rejection"), tests.cumprod(0).bool()),
                  (Ev("accept (u < min(1, p/q))"), torch.tensor(True)), (Ev("reject (u >= min(1, p/q))"), torch.tensor(False)),
                  (Ev("CDF > u"), cdf > uniform), (Ev("CDF <= u"), cdf <= uniform),
                  (Ev("tokens whose CDF exceeds u"), (cdf > uniform).nonzero())]  # fmt: skip
    drawn = Ev("token drawn at the rejection") if n < gamma else Ev("bonus token")
    steps += [(Ev("tokens with probability > 0"), dist.nonzero()), (Ev("last token with probability > 0"), dist.nonzero()[-1, 0]),
              (drawn, torch.tensor(tokens[-1]))]  # fmt: skip
    if exact:
        steps += [(Ev("draft positions"), rows), (Ev("number accepted"), torch.tensor(n))]
    steps.append(("output", torch.tensor(tokens)))
    inverted = [(r**-2, INVERTED) for r in ratio.tolist()] + [(1 / r, INVERTED) for r in ratio.tolist() if r > 1]
    return Case(ctx.entry, (draft, q, p, u), steps, exact=exact, integers=True, factors=inverted, label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Every draft accepted, when a check failed though the fixed input (a rejection) traced clean."""
    if not failed:
        return []
    return [case(ctx, inputs(ALL_ACCEPTED), exact=True, label=Ev("every draft accepted"))]
