"""The leak picture: which (query, key) pairs the user's code lets through, against what the contract allows.

Measured by perturbation in float64 (the mask-leak checks' method): move one key position by a large
random amount and see which query outputs move at all. Drawn by drill.views.trace_view, at most
:data:`MAX_T` positions a side so that it reads at 80 columns.
"""

from __future__ import annotations

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD
from drill.text.messages import Ev

MAX_T = 12


def through(call, x: torch.Tensor, rows, *, axis: int = 1, others=()) -> torch.Tensor:
    """bool [B, Tq, Tk]: output row i of sample b moves when position j of ``x`` (and of each of ``others``,
    along ``axis``) moves. ``call(x, *others)`` runs the user's code; ``rows(out)`` reduces it to [B, Tq]."""
    gen = torch.Generator().manual_seed(11)
    base = rows(call(x, *others).detach())
    found = []
    for j in range(x.shape[axis]):
        moved = []
        for t in (x, *others):
            t2 = t.clone()
            index = [slice(None)] * t.dim()
            index[axis] = j
            t2[tuple(index)] += 10 * torch.randn(t2[tuple(index)].shape, generator=gen, dtype=t.dtype)
            moved.append(t2)
        out = rows(call(*moved).detach())
        found.append((out - base).abs().nan_to_num(nan=float("inf")) > LEAK_THRESHOLD)
    return torch.stack(found, dim=-1)


def picture(title: Ev, allowed: torch.Tensor, let_through: torch.Tensor) -> dict:
    """One [Tq, Tk] picture (cut to MAX_T a side)."""
    return {"kind": "leak", "title": title, "allowed": allowed[:MAX_T, :MAX_T].tolist(),
            "through": let_through[:MAX_T, :MAX_T].tolist()}  # fmt: skip


def last_dims(out: torch.Tensor) -> torch.Tensor:
    """[B, T, ...] -> [B, T]: the largest change over the feature dims."""
    return out.abs().flatten(2).amax(-1) if out.dim() > 2 else out.abs()
