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

import statistics
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


def seconds(fn, *args) -> float:
    """Median seconds of one ``fn(*args)`` (CUDA events on CUDA, torch.utils.benchmark on CPU)."""
    if args[0].device.type == "cuda":
        fn(*args)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        runs = 10
        start.record()
        for _ in range(runs):
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / runs
    from torch.utils import benchmark

    timer = benchmark.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=0.2).median


def cuda_median(fn, *args, warmup: int = 3, runs: int = 50) -> float:
    """Median seconds of one ``fn(*args)`` on CUDA, as ``triton.testing.do_bench`` times: each call between its own
    events, after a 256 MiB write that evicts the L2 cache (so a memory-bound kernel reads from DRAM, not cache)
    and keeps the GPU busy while the next launch is queued (so the launcher's Python cost is hidden)."""
    for _ in range(warmup):  # the first call compiles (and autotunes) the kernel
        fn(*args)
    flush = torch.empty(256 << 20, dtype=torch.int8, device=args[0].device)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for start, end in events:
        flush.zero_()
        start.record()
        fn(*args)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events) / 1e3


def peak_bytes(fn, *args) -> int:
    if args[0].device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(args[0].device)
        before = torch.cuda.memory_allocated(args[0].device)
        fn(*args)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated(args[0].device) - before
    with LiveBytes(known=[a for a in args if isinstance(a, torch.Tensor)]) as mode:
        fn(*args)
    return mode.peak
