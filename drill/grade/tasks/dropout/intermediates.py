"""What ``drill grade --trace`` compares the user's dropout against: x [5, 7], p = 0.25, training, a seeded
generator. The mask is the user's own (any correct draw is right, and no reference can know which one the code
makes): it is read from a first, untraced call with the same seed; then the keep mask, x·mask, 1 / (1 - p), the
scaled mask and the output are the reference's. Code that ignores the generator draws another mask on the traced
call, so it gets no trace (robustness.generator names it). The stress input, when the eval check failed, is the
call with training=False, whose output is x itself."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.grade.tracing import NoTrace
from drill.grade.user.wire import Generator
from drill.text.messages import Ev

SHAPE, P, SEED = (5, 7), 0.25, 7
EVAL = Ev("training=False")
P1 = Ev("p = 1")


def nonzero_x() -> torch.Tensor:
    z = torch.randn(*SHAPE, generator=torch.Generator().manual_seed(SEED), dtype=torch.float64)
    return (z.sign() + (z == 0).double()) * (0.5 + z.abs())


def case(ctx) -> Case:
    x = nonzero_x()
    first, again = (ctx.call(ctx.entry, x, P, True, Generator(SEED)) for _ in range(2))
    if not all(isinstance(t, torch.Tensor) and t.shape == x.shape for t in (first, again)) or not torch.equal(first, again):
        raise NoTrace("no reproducible mask to compare against")
    keep = first.detach() != 0
    scale = torch.tensor(1 / (1 - P), dtype=torch.float64)
    steps = [("x", x), (Ev("keep mask"), keep), (Ev("keep mask (0/1)"), keep.double()), (Ev("x·mask"), x * keep),
             (Ev("1 - p"), torch.tensor(1 - P, dtype=torch.float64)), (Ev("1 / (1 - p)"), scale), (Ev("mask / (1 - p)"), keep * scale),
             ("output", x * keep * scale)]  # fmt: skip
    factors = [(1 - P, Ev("not scaled by 1 / (1 - p)")), ((1 - P) / P, Ev("scaled by 1 / p: p used as the keep probability"))]
    return Case(ctx.entry, (x, P, True, Generator(SEED)), steps, factors=factors)


def stress(ctx, failed: set[str]) -> list[Case]:
    """The eval call when an eval check failed (the output must be x, unscaled and undropped); p = 1 when that
    check failed (all zeros: a division by 1 - p makes 0 / 0 there)."""
    x = nonzero_x()
    found = []
    if any(name.startswith("numerical.eval") for name in failed):
        found.append(Case(ctx.entry, (x, P, False, Generator(SEED)), [("x", x), ("output", x)], label=EVAL))
    if "numerical.p1" in failed:
        found.append(Case(ctx.entry, (x, 1.0, True, Generator(SEED)), [("x", x), ("output", torch.zeros_like(x))], label=P1))
    return found
