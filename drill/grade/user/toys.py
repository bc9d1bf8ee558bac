"""Drill's toy language model, the ``step_fn`` that the beam_search task hands the user's code.

It lives on the user side because a callable cannot cross the wire: the judge sends its table
(wire.StepTable) and both sides compute the same float64 log-probabilities from it, the judge for
its exact beam search, the user's code through this object.
"""

from __future__ import annotations

import torch


def log_probs(table: torch.Tensor, prefixes: torch.Tensor) -> torch.Tensor:
    """Next-token log-probs [N, V] of a two-token-context model: table[0][last] + table[1][the one before]."""
    last = prefixes[:, -1]
    before = prefixes[:, -2] if prefixes.shape[1] > 1 else last
    return torch.log_softmax(table[0][last] + table[1][before], dim=-1)


class StepFn:
    """``step_fn(prefixes [N, t]) -> log-probs [N, V]`` (float64, on the prefixes' device). With a ``log`` (int64
    [V, V]) it adds up each pair of adjacent tokens (a, b) of the prefixes it is asked about into log[a, b]: how the
    judge sees which hypotheses the search kept live (one that goes on after eos was extended though finished)."""

    def __init__(self, table: torch.Tensor, log: torch.Tensor | None = None):
        self.vocab_size = table.shape[-1]
        self._table = table
        self._log = log
        self.calls = 0

    def __call__(self, prefixes) -> torch.Tensor:
        if not isinstance(prefixes, torch.Tensor) or prefixes.dim() != 2 or prefixes.shape[1] == 0:
            shape = list(prefixes.shape) if isinstance(prefixes, torch.Tensor) else type(prefixes).__name__
            raise ValueError(f"step_fn takes prefixes [N, t] with t >= 1 (a 2-D tensor of token ids), got {shape}")
        if prefixes.dtype.is_floating_point or prefixes.dtype == torch.bool:
            raise ValueError(f"step_fn takes integer token ids, got {prefixes.dtype}")
        ids = prefixes.long()
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"step_fn: token ids must be in 0..{self.vocab_size - 1}, got {ids.min().item()}..{ids.max().item()}")
        self.calls += 1
        if self._log is not None and ids.shape[1] > 1:
            pairs = ids.cpu()
            self._log.index_put_((pairs[:, :-1].flatten(), pairs[:, 1:].flatten()), torch.ones((), dtype=torch.int64), accumulate=True)
        return log_probs(self._table, ids.cpu()).to(prefixes.device)

    def __repr__(self) -> str:
        return f"step_fn(vocab_size={self.vocab_size})"
