"""The simulated collective that ring all-reduce's ``comm`` is on the user side (the wire's ``$comm`` recipe).

``send(src, dst, tensor)`` returns the receiver's copy and records the send in ``log``, the int64 tensor the
judge sent with the call: row 0 holds [sends, rounds, 0, 0], row i the i-th send as [src, dst, numel, round].
The log changes in place, so it returns to the judge as a modified input, in the reply that carries the
result: the user's code can call ``send``, it cannot reach the judge. A round is what one step of a
synchronous network does: each rank sends at most one message and receives at most one; a send by a rank
that already sent (or to one that already received) in this round starts the next round.
"""

from __future__ import annotations

import torch


class Comm:
    """N simulated ranks that exchange tensors only through :meth:`send`."""

    def __init__(self, n_ranks: int, log: torch.Tensor):
        self.n_ranks = n_ranks
        self._log = log
        self._senders: set[int] = set()
        self._receivers: set[int] = set()

    def send(self, src, dst, tensor):
        """Rank ``src`` sends ``tensor`` to rank ``dst``: returns the copy that ``dst`` receives."""
        n = self.n_ranks
        for name, rank in (("src", src), ("dst", dst)):
            if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < n:
                raise ValueError(f"comm.send: {name}={rank!r} is not a rank in 0..{n - 1}")
        if src == dst:
            raise ValueError(f"comm.send: rank {src} sends to itself")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"comm.send: sends a tensor, not a {type(tensor).__name__}")
        log = self._log
        count, rounds = int(log[0, 0]), max(int(log[0, 1]), 1)
        if src in self._senders or dst in self._receivers:
            rounds += 1
            self._senders.clear()
            self._receivers.clear()
        self._senders.add(src)
        self._receivers.add(dst)
        count += 1
        if count < log.shape[0]:  # past the capacity only the count grows: the judge sees the overflow
            log[count] = torch.tensor([src, dst, tensor.numel(), rounds], dtype=torch.int64)
        log[0, 0], log[0, 1] = count, rounds
        return tensor.detach().clone()
