"""Timing and peak memory of one kernel call, for ``--bench``: used on both sides (the user's
kernel on the user side, the reference and torch's SDPA in the judge).

Peak memory: on CUDA, ``max_memory_allocated`` during one call minus what was allocated
before it. On CPU, :class:`LiveBytes` counts the bytes of every tensor that a torch op
creates during the call and that is alive at the same time (outputs of views and in-place
ops share storage and are not counted twice); the inputs are not counted. It sees what the
Python code allocates through torch ops, not the private workspace inside one fused kernel,
which is why torch's SDPA (one op) shows only its outputs.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils._pytree import tree_leaves

from .spy import DispatchMode


class LiveBytes(DispatchMode):
    """Tracks the peak of live bytes allocated by ops run under the mode (see the module docstring)."""

    def __init__(self, known=()):
        super().__init__()
        self.refs: dict[int, list] = {t.untyped_storage().data_ptr(): [1, 0] for t in known}  # ptr -> [refs, bytes]
        self.now = self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in self.refs:
            self.refs[ptr][0] += 1
        else:
            self.refs[ptr] = [1, storage.nbytes()]
            self.now += storage.nbytes()
            self.peak = max(self.peak, self.now)
        weakref.finalize(t, self._release, ptr)

    def _release(self, ptr: int) -> None:
        entry = self.refs.get(ptr)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            self.now -= entry[1]
            del self.refs[ptr]


def seconds(fn, q, k, v) -> float:
    """Median seconds of one ``fn(q, k, v)`` (CUDA events on CUDA, torch.utils.benchmark on CPU)."""
    if q.device.type == "cuda":
        fn(q, k, v)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        runs = 10
        start.record()
        for _ in range(runs):
            fn(q, k, v)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / runs
    from torch.utils import benchmark

    timer = benchmark.Timer(stmt="fn(q, k, v)", globals={"fn": fn, "q": q, "k": k, "v": v}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=0.2).median


def peak_bytes(fn, q, k, v) -> int:
    if q.device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(q.device)
        before = torch.cuda.memory_allocated(q.device)
        fn(q, k, v)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated(q.device) - before
    with LiveBytes(known=(q, k, v)) as mode:
        fn(q, k, v)
    return mode.peak
