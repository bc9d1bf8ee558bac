"""``drill grade FILE --bench``: time the user's kernel against the reference and torch's SDPA. Runs in the worker.

Inputs are [B, H, T, D] = [1, 4, T, 64] in fp32, no mask, for T = 256 ... 4096 (capped by
``max_t``). Times are medians from torch.utils.benchmark on CPU and CUDA events on CUDA.

Peak memory: on CUDA, ``max_memory_allocated`` during one call minus what was allocated
before it. On CPU, :class:`LiveBytes` counts the bytes of every tensor that a torch op
creates during the call and that is alive at the same time (outputs of views and in-place
ops share storage and are not counted twice); the inputs are not counted. It sees what the
Python code allocates through torch ops, not the private workspace inside one fused kernel,
which is why torch's SDPA (one op) shows only its outputs.
"""

from __future__ import annotations

import weakref
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from drill.errors import DrillError, ExitCode
from drill.grade.battery import resolve_device
from drill.grade.loader import UserCodeError, describe_exception, load_user_file
from drill.grade.reference import attention
from drill.grade.tasks import BENCH_TASKS, TASKS, detect

SIZES = (256, 512, 1024, 2048, 4096)
B, H, D = 1, 4, 64
CPU_MEASURE = ("CPU peak: the largest total of bytes of tensors created by torch ops during one call and alive at once "
               "(inputs excluded; the workspace inside a single fused op is not seen).")  # fmt: skip
CUDA_MEASURE = "CUDA peak: torch.cuda.max_memory_allocated during one call, minus the memory allocated before it."


class LiveBytes(TorchDispatchMode):
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


def run_bench(path: str, task: str | None, device: str, seed: int, max_t: int) -> dict:
    dev = resolve_device(device)
    try:
        module = load_user_file(Path(path))
    except UserCodeError as exc:
        raise DrillError(f"--bench: {exc}", exit_code=ExitCode.FAILED) from None
    spec = TASKS[task] if task else detect(vars(module))
    if spec is None or spec.name not in BENCH_TASKS or not hasattr(module, spec.entry):
        raise DrillError(f"--bench times a kernel called as fn(q, k, v): tasks {', '.join(k for k in BENCH_TASKS if k in TASKS)}")
    contenders = {
        "yours": getattr(module, spec.entry),
        "reference": lambda q, k, v: attention(q, k, v)[0],
        "torch": F.scaled_dot_product_attention,
    }
    sizes = [t for t in SIZES if t <= max_t]
    if not sizes:
        raise DrillError(f"--bench-max-t must be at least {SIZES[0]}")
    torch.manual_seed(seed)
    rows = []
    for t in sizes:
        q, k, v = (torch.randn(B, H, t, D, device=dev) for _ in range(3))
        row = {}
        for name, fn in contenders.items():
            try:
                with torch.no_grad():
                    row[name] = {"seconds": _time(fn, q, k, v, dev), "peak_bytes": _peak(fn, q, k, v, dev)}
            except Exception as exc:  # noqa: BLE001 - the user's kernel failing at a size is the finding
                raise DrillError(f"--bench: {name} failed at T={t}: {describe_exception(exc, Path(path))}", exit_code=ExitCode.FAILED) from None
        rows.append({"t": t, "contenders": row})
    measure = CUDA_MEASURE if dev.type == "cuda" else CPU_MEASURE
    return {"task": spec.name, "device": str(dev), "shape": f"[{B}, {H}, T, {D}] fp32", "memory_measure": measure, "rows": rows}


def _time(fn, q, k, v, dev: torch.device) -> float:
    if dev.type == "cuda":
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


def _peak(fn, q, k, v, dev: torch.device) -> int:
    if dev.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(dev)
        before = torch.cuda.memory_allocated(dev)
        fn(q, k, v)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated(dev) - before
    with LiveBytes(known=(q, k, v)) as mode:
        fn(q, k, v)
    return mode.peak
