"""What ``drill grade --trace`` compares the user's alibi_attention against: the slopes (3 heads: the
closest-power rule), the distance table, the bias, then causal attention; for the paper's -m|i-j| and for
BLOOM's +m·j form (the same weights under the causal mask)."""

from __future__ import annotations

import math

import torch

from drill.grade.tasks.alibi.task import alibi_slopes
from drill.grade.trace_match import PAIRS, Case
from drill.grade.tracing import scale_factors
from drill.text.messages import Ev

B, H, T, D = 2, 3, 5, 4  # 3 heads: not a power of two; no two sizes equal


def case(ctx) -> list[Case]:
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, T, D, generator=gen, dtype=torch.float64) for _ in range(3))
    slopes = torch.tensor(alibi_slopes(H), dtype=torch.float64)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(D)
    found = []
    for distance, sign in (((i - j).abs().double(), -1.0), (j.expand(T, T).double(), 1.0)):
        bias = sign * slopes[:, None, None] * distance
        biased = scaled + bias
        masked = biased.masked_fill(j > i, float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        steps = [("q", q), ("k", k), ("v", v), ("slopes", slopes), (Ev("distance"), distance), ("bias", bias), ("scores", scores),
                 ("scaled", scaled), ("scaled + bias", biased), ("masked", masked), ("weights", weights),
                 ("output", weights @ v)]  # fmt: skip
        found.append(Case(ctx.entry, (q, k, v), steps, kwargs={"causal": True}, factors=scale_factors(D), unit=PAIRS))
    return found
