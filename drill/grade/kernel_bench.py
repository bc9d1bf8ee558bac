"""What ``--bench`` times for a kernel task, and what the times mean against the GPU's roofs. Torch-free.

A kernel task declares ``bench = KernelBench(...)`` on its task object: the shapes to time, torch's own op
to time against, and the work of one call: the least bytes it must move (each input read once, the output
written once) and, where the kernel is compute-bound, its FLOPs. The judge times both sides
(drill/grade/bench.py); :func:`result` turns the seconds into GB/s, TFLOP/s and a fraction of the roof
(drill/grade/roofline.py) as plain data, which the parent renders (drill/views/bench_view.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from drill.grade.roofline import Roofs, fraction

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
TIMING = ("median of 50 calls on CUDA events, each after a 256 MiB write that evicts the L2 cache "
          "(as triton.testing.do_bench times); yours on the user side, torch's op in the judge")  # fmt: skip


@dataclass(frozen=True)
class Case:
    dims: dict[str, int]  # e.g. {"M": 4096, "N": 4096}
    dtype: str = "float16"

    @property
    def label(self) -> str:
        return "×".join(str(v) for v in self.dims.values())  # the dims by name are in the JSON


@dataclass(frozen=True)
class KernelBench:
    bound: str  # "memory" (judged against the bandwidth roof) or "compute" (against the FLOP roof)
    cases: tuple[Case, ...]
    inputs: Callable  # (dims, torch dtype, device, generator) -> the launcher's positional arguments
    torch_op: Callable  # torch's own op on the same arguments
    torch_name: str  # how the table names it, e.g. "torch.softmax"
    bytes: Callable[[dict, int], int]  # the least bytes one call moves, from the dims and the element size
    flops: Callable[[dict], int] | None = None  # floating-point operations of one call (a multiply-add is 2)


def figures(bench: KernelBench, case: Case, seconds: float, peak_bytes: int, roofs: Roofs) -> dict:
    """One contender at one case: its time, the rates it reached and their fraction of the roof (None: unknown)."""
    gbs = bench.bytes(case.dims, DTYPE_BYTES[case.dtype]) / seconds / 1e9
    tflops = bench.flops(case.dims) / seconds / 1e12 if bench.flops else None
    return {"seconds": seconds, "peak_bytes": peak_bytes, "gbs": gbs, "tflops": tflops,
            "roof_fraction": fraction(bench.bound, case.dtype, gbs, tflops, roofs)}  # fmt: skip


def result(task: str, device: str, gpu: str, bench: KernelBench, roofs: Roofs, timings) -> dict:
    """The bench as plain data; ``timings``: per case, ((yours s, yours peak), (torch s, torch peak))."""
    rows = []
    for case, (yours, theirs) in zip(bench.cases, timings, strict=True):
        rows.append({
            "shape": case.label, "dims": dict(case.dims), "dtype": case.dtype,
            "bytes": bench.bytes(case.dims, DTYPE_BYTES[case.dtype]), "flops": bench.flops(case.dims) if bench.flops else None,
            "yours": figures(bench, case, *yours, roofs), "torch": figures(bench, case, *theirs, roofs),
            "ratio_vs_torch": yours[0] / theirs[0],
        })  # fmt: skip
    return {"kind": "kernel", "task": task, "device": device, "gpu": gpu, "bound": bench.bound, "torch_op": bench.torch_name,
            "timing": TIMING, "roofs": roofs.to_json(), "rows": rows}  # fmt: skip


@dataclass(frozen=True)
class KernelBenchResult:
    """The judge's kernel bench (:func:`result`) in the parent: the view reads ``data``, ``--json`` prints it."""

    data: dict

    def to_json(self) -> dict:
        return self.data
