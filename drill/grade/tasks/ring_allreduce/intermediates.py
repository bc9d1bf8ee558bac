"""What ``drill grade --trace`` compares the user's ring_allreduce against, value by value: for 3 ranks with
chunks of 2, the copies of the inputs, then the ranks' chunks after each round: 2 of the reduce-scatter, then 2 of
the all-gather (each round every rank sends one chunk to rank r + 1); then the result."""

from __future__ import annotations

import torch

from drill.grade.trace_values import ValueCase
from drill.grade.user.wire import Comm
from drill.text.messages import Ev

N = 3


def steps_for(chunks) -> list[tuple[str, object]]:
    n = len(chunks)
    buf = [[c.clone() for c in row] for row in chunks]
    steps = [(Ev("the copies of the inputs"), [[t.clone() for t in row] for row in buf])]
    for phase in (0, 1):  # one kind of step for both phases: a helper that runs any round is one line for both
        for step in range(n - 1):
            for r in range(n):
                dst = (r + 1) % n
                c = (r - step) % n if phase == 0 else (r + 1 - step) % n
                buf[dst][c] = buf[dst][c] + buf[r][c] if phase == 0 else buf[r][c].clone()
            done = phase * (n - 1) + step + 1
            steps.append((Ev("the chunks after round {n}", n=done), [[t.clone() for t in row] for row in buf]))
    return [*steps, ("output", buf)]


def case(ctx) -> list[ValueCase]:
    # powers of two: every partial sum is a different number, so no round's chunks look like another's
    chunks = [[torch.tensor([1.0, -3.0], dtype=torch.float64) * 2.0 ** (r * N + c) for c in range(N)] for r in range(N)]
    comm = Comm(N, torch.zeros(4 * N * N + 9, 4, dtype=torch.int64))
    label = Ev("{ranks} ranks, chunks of {size}", ranks=N, size=len(chunks[0][0]))
    return [ValueCase(ctx.entry, (chunks, comm), steps_for(chunks), label=label)]
