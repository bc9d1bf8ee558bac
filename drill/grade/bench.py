"""``drill grade FILE --bench``: time the user's kernel against the reference and torch's SDPA. Runs in the judge.

Inputs are [B, H, T, D] = [1, 4, T, 64] in fp32, no mask, for T = 256 ... 4096 (capped by
``max_t``). The user's kernel is timed on the user side (the tensors go there, two numbers come
back); the reference and torch's SDPA are timed here. Times are medians from
torch.utils.benchmark on CPU and CUDA events on CUDA; peak memory as drill.grade.user.measure says.

A kernel task (one whose task object declares ``bench``, drill/grade/kernel_bench.py) is timed only compiled,
on CUDA: its launcher on the user side, torch's own op here, each a median of L2-flushed CUDA-event timings.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from drill.errors import DrillError, ExitCode
from drill.grade import kernel_bench, remote, roofline
from drill.grade.battery import memory_default, resolve_device
from drill.grade.reference import attention
from drill.grade.remote import Abort, UserCodeError
from drill.grade.tasks import BENCH_TASKS, TASKS, detect
from drill.grade.user import measure

SIZES = (256, 512, 1024, 2048, 4096)
B, H, D = 1, 4, 64
CPU_MEASURE = ("CPU peak: the largest total of bytes of tensors created by torch ops during one call and alive at once "
               "(inputs excluded; the workspace inside a single fused op is not seen).")  # fmt: skip
CUDA_MEASURE = "CUDA peak: torch.cuda.max_memory_allocated during one call, minus the memory allocated before it."


def run_bench(path: str, task: str | None, device: str, seed: int, max_t: int, timeout: float, threads: int | None = None) -> dict:
    dev = resolve_device(device)
    sizes = [t for t in SIZES if t <= max_t]
    if not sizes:
        raise DrillError("--bench-max-t must be at least {least}", least=SIZES[0])
    memory = None if dev.type == "cuda" else memory_default()
    user = remote.UserProcess(remote.zygote(threads), timeout=timeout, device=dev, memory=memory)
    try:
        return _bench(user, Path(path), task, dev, seed, sizes)
    except UserCodeError as exc:
        raise DrillError("--bench: {why}", exit_code=ExitCode.FAILED, why=str(exc)) from None
    except Abort as exc:
        raise DrillError("--bench: {why}", exit_code=ExitCode.FAILED, why=exc.check.message) from None
    finally:
        user.close()


def _bench(user: remote.UserProcess, path: Path, task: str | None, dev: torch.device, seed: int, sizes) -> dict:
    names = user.load(str(path.resolve()))
    spec = TASKS[task] if task else detect(names)
    declared = getattr(spec.load(), "bench", None) if spec else None
    if declared is not None and spec.entry in names:
        return _kernel(user, spec.name, user.entry(spec.entry), declared, dev, seed)
    if spec is None or spec.name not in BENCH_TASKS or spec.entry not in names:
        raise DrillError("--bench times a kernel called as fn(q, k, v): tasks {tasks}", tasks=", ".join(k for k in BENCH_TASKS if k in TASKS))
    entry = user.entry(spec.entry)
    local = {"reference": lambda q, k, v: attention(q, k, v)[0], "torch": F.scaled_dot_product_attention}
    torch.manual_seed(seed)
    rows = []
    for t in sizes:
        q, k, v = (torch.randn(B, H, t, D, device=dev) for _ in range(3))
        row = {}
        try:
            seconds, peak = user.bench(entry, q, k, v)
        except UserCodeError as exc:
            raise DrillError("--bench: yours failed at T={t}: {why}", exit_code=ExitCode.FAILED, t=t, why=str(exc)) from None
        row["yours"] = {"seconds": seconds, "peak_bytes": peak}
        for name, fn in local.items():
            with torch.no_grad():
                row[name] = {"seconds": measure.seconds(fn, q, k, v), "peak_bytes": measure.peak_bytes(fn, q, k, v)}
        rows.append({"t": t, "contenders": row})
    measure_text = CUDA_MEASURE if dev.type == "cuda" else CPU_MEASURE
    return {"task": spec.name, "device": str(dev), "shape": f"[{B}, {H}, T, {D}] fp32", "memory_measure": measure_text, "rows": rows}


def _kernel(user: remote.UserProcess, task: str, entry, bench: kernel_bench.KernelBench, dev: torch.device, seed: int) -> dict:
    """Each case: the user's launcher and torch's op on the same inputs, then the GPU's roofs."""
    if dev.type != "cuda":
        raise DrillError("--bench times a Triton kernel only compiled, on a GPU (--device cuda)")
    gen = torch.Generator(device=dev).manual_seed(seed)
    timings = []
    for case in bench.cases:
        args = bench.inputs(case.dims, getattr(torch, case.dtype), dev, gen)
        try:
            yours = user.bench(entry, *args, median=True)
        except UserCodeError as exc:
            raise DrillError("--bench: yours failed at {case} {dtype}: {why}", exit_code=ExitCode.FAILED, case=case.label, dtype=str(case.dtype), why=str(exc)) from None
        with torch.no_grad():
            timings.append((yours, (measure.cuda_median(bench.torch_op, *args), measure.peak_bytes(bench.torch_op, *args))))
    props = torch.cuda.get_device_properties(dev)
    roofs = roofline.roofs(props.name, getattr(props, "memory_clock_rate", 0), getattr(props, "memory_bus_width", 0))
    return kernel_bench.result(task, str(dev), props.name, bench, roofs, timings)
