"""``drill grade --bench`` of a Triton kernel task, without a GPU: the work each task declares, the roofline
arithmetic (recomputed here by hand), the peak lookup, the rendering in both languages and the JSON shape.
The CUDA timing itself runs only on a GPU."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from drill.grade import roofline
from drill.grade.kernel_bench import Case, KernelBench, KernelBenchResult, result
from drill.grade.report import Check, Report
from drill.views import bench_view, kernel_bench_view

torch = pytest.importorskip("torch")

from drill.grade.tasks import TASKS  # noqa: E402

KERNEL_TASKS = ("triton_softmax", "triton_rmsnorm", "triton_cumsum")
H200 = roofline.roofs("NVIDIA H200")


def bench_of(task: str) -> KernelBench:
    return TASKS[task].load().bench


def fake_timings(bench: KernelBench, yours: float, theirs: float):
    return [((yours, 0), (theirs, 1 << 20)) for _ in bench.cases]


@pytest.mark.parametrize("task", KERNEL_TASKS)
def test_each_task_declares_torch_op_computing_its_own_reference_and_the_bytes_it_moves(task):
    bench = bench_of(task)
    assert bench.bound == "memory" and bench.cases
    dims = {"M": 5, "N": 37}
    args = bench.inputs(dims, torch.float32, "cpu", torch.Generator().manual_seed(0))
    out = bench.torch_op(*args)
    module = __import__(f"drill.grade.tasks.{task}.task", fromlist=["x"])
    if task == "triton_rmsnorm":
        expected = module.reference(args[0].double(), args[1].double())
    else:
        expected = module.truth_of(args[0])[0]
    torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-6)
    moved = sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor)) + out.numel() * out.element_size()
    assert bench.bytes(dims, 4) == moved


def test_matmul_declares_torch_matmul_its_bytes_and_flops():
    bench = bench_of("triton_matmul")
    assert bench.bound == "compute" and bench.cases
    dims = {"M": 5, "K": 37, "N": 11}
    a, b = bench.inputs(dims, torch.float32, "cpu", torch.Generator().manual_seed(0))
    out = bench.torch_op(a, b)
    torch.testing.assert_close(out.double(), a.double() @ b.double(), rtol=1e-5, atol=1e-5)
    assert bench.bytes(dims, 4) == sum(t.numel() * t.element_size() for t in (a, b, out))
    assert bench.flops(dims) == 2 * 5 * 37 * 11


def test_flash_attention_declares_sdpa_its_bytes_and_flops():
    bench = bench_of("triton_flash_attention")
    assert bench.bound == "compute" and bench.cases
    dims = {"B": 2, "H": 3, "T": 7, "D": 16}
    q, k, v = bench.inputs(dims, torch.float16, "cpu", torch.Generator().manual_seed(0))
    assert q.shape == k.shape == v.shape == (2, 3, 7, 16) and q.dtype == torch.float16
    module = __import__("drill.grade.tasks.triton_flash_attention.task", fromlist=["x"])
    (o64, lse64), _ = module.truth_of(q, k, v, False)
    out = bench.torch_op(*(t.float() for t in (q, k, v)))
    torch.testing.assert_close(out.double(), o64, rtol=1e-5, atol=1e-5)
    lse = torch.empty(lse64.shape, dtype=torch.float32)  # what the launcher returns beside o
    assert bench.bytes(dims, 2) == sum(t.numel() * t.element_size() for t in (q, k, v, out.half(), lse))
    assert bench.flops(dims) == 2 * (2 * 2 * 3 * 7 * 7 * 16)  # q k^T and p v: 2 T*T*D multiply-adds per head


def test_memory_bound_rates_and_roof_fraction_by_hand():
    bench = bench_of("triton_softmax")
    case = Case({"M": 4096, "N": 4096}, "float16")
    one = KernelBench(bench.bound, (case,), bench.inputs, bench.torch_op, bench.torch_name, bench.bytes)
    data = result("triton_softmax", "cuda", "NVIDIA H200", one, H200, [((100e-6, 0), (80e-6, 0))])
    row = data["rows"][0]
    # 4096 x 4096 fp16 read once and written once: 67,108,864 bytes; in 100 us: 671.08864 GB/s; of 4,800 GB/s: 13.98 %
    assert row["bytes"] == 67_108_864
    assert row["yours"]["gbs"] == pytest.approx(671.08864)
    assert row["yours"]["roof_fraction"] == pytest.approx(671.08864 / 4800)
    assert row["torch"]["gbs"] == pytest.approx(838.8608)
    assert row["ratio_vs_torch"] == pytest.approx(1.25)
    assert row["yours"]["tflops"] is None and row["flops"] is None


def test_compute_bound_fraction_is_of_the_dtype_tensor_roof():
    gemm = KernelBench("compute", (Case({"M": 4096, "N": 4096, "K": 4096}, "float16"), Case({"M": 4096, "N": 4096, "K": 4096}, "float32")),
                       None, None, "torch.matmul", lambda d, e: (d["M"] * d["K"] + d["K"] * d["N"] + d["M"] * d["N"]) * e,
                       lambda d: 2 * d["M"] * d["N"] * d["K"])  # fmt: skip
    data = result("gemm", "cuda", "NVIDIA H100 80GB HBM3", gemm, roofline.roofs("NVIDIA H100 80GB HBM3"), fake_timings(gemm, 1e-3, 1e-3))
    half, single = data["rows"]
    # 2 * 4096^3 = 137,438,953,472 FLOPs in 1 ms: 137.44 TFLOP/s; of 989.4 (FP16 dense) and of 494.7 (TF32 dense)
    assert half["flops"] == 137_438_953_472
    assert half["yours"]["tflops"] == pytest.approx(137.438953472)
    assert half["yours"]["roof_fraction"] == pytest.approx(137.438953472 / 989.4)
    assert single["yours"]["roof_fraction"] == pytest.approx(137.438953472 / 494.7)
    assert half["yours"]["gbs"] == pytest.approx(3 * 4096 * 4096 * 2 / 1e-3 / 1e9)


@pytest.mark.parametrize("name, model, gbs", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM", 3350), ("NVIDIA H100 PCIe", "H100 PCIe", 2000), ("NVIDIA H100 NVL", "H100 NVL", 3900),
    ("NVIDIA H200", "H200 SXM", 4800), ("NVIDIA H200 NVL", "H200 NVL", 4800), ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM", 1555),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM", 2039), ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 1935),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe", 1555), ("NVIDIA A10", "A10", 600), ("NVIDIA L4", "L4", 300),
    ("NVIDIA L40", "L40", 864), ("NVIDIA L40S", "L40S", 864), ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090", 1008),
    ("Tesla T4", "T4", 320),
])  # fmt: skip
def test_datasheet_lookup_tells_variants_apart(name, model, gbs):
    sheet = roofline.datasheet(name)
    assert (sheet.model, sheet.gbs) == (model, gbs)
    found = roofline.roofs(name)
    assert found.gbs == gbs and model in found.gbs_source and found.tflops["float16"] == sheet.fp16_tflops


def test_bandwidth_from_the_device_properties_wins_and_unknown_gpus_have_no_roof():
    measured = roofline.roofs("NVIDIA H100 80GB HBM3", memory_clock_khz=2_619_000, bus_width_bits=5120)
    assert measured.gbs == pytest.approx(2 * 2.619e9 * 640 / 1e9) and measured.gbs_source == roofline.PROPERTIES
    assert measured.tflops["bfloat16"] == 989.4
    assert roofline.roofs("Tesla T4").tflops == {"float16": 65.0}  # no bfloat16, no TF32 on Turing
    for name in ("NVIDIA A10G", "NVIDIA GeForce RTX 4090 D", "Some Future GPU"):
        unknown = roofline.roofs(name)
        assert (unknown.gbs, unknown.tflops, unknown.tflops_source) == (None, {}, None)
        assert roofline.fraction("memory", "float16", 500.0, None, unknown) is None
    clocked = roofline.roofs("Some Future GPU", memory_clock_khz=1_000_000, bus_width_bits=4096)
    assert clocked.gbs == pytest.approx(1024.0) and clocked.tflops == {}
    assert roofline.fraction("compute", "float16", 1.0, 50.0, clocked) is None


def render(monkeypatch, data: dict, lang: str) -> str:
    console = Console(file=io.StringIO(), width=220, highlight=False)
    monkeypatch.setattr(kernel_bench_view, "out", console)
    kernel_bench_view.print_kernel_bench(data, lang)
    return console.file.getvalue()


def softmax_data(gpu: str, roofs: roofline.Roofs) -> dict:
    bench = bench_of("triton_softmax")
    return result("triton_softmax", "cuda", gpu, bench, roofs, fake_timings(bench, 100e-6, 80e-6))


def test_view_in_english_and_chinese(monkeypatch):
    data = softmax_data("NVIDIA H200", H200)
    en, zh = render(monkeypatch, data, "en"), render(monkeypatch, data, "zh")
    assert "memory-bound" in en and "of roof" in en and "torch.softmax" in en and "4,800 GB/s" in en
    assert "14%" in en and "671" in en and "1.25x" in en and "100.0 µs" in en  # 4096 x 4096 fp16 in 100 us
    assert "访存受限" in zh and "占峰值" in zh and "峰值：显存带宽 4,800 GB/s" in zh and "14%" in zh
    assert "of roof" not in zh and "memory-bound" not in zh and "median of" not in zh


def test_view_of_an_unknown_gpu_gives_absolute_figures(monkeypatch):
    data = softmax_data("Some Future GPU", roofline.roofs("Some Future GPU"))
    en, zh = render(monkeypatch, data, "en"), render(monkeypatch, data, "zh")
    assert "roof unknown for Some Future GPU" in en and "671" in en and "%" not in en
    assert "Some Future GPU 的峰值未知" in zh and "%" not in zh


def passed_report(task: str, device: str) -> Report:
    return Report(task=task, device=device, checks=[Check("shape.basic", "shape", "pass", "ok")])


def test_json_shape(capsys):
    bench = KernelBenchResult(softmax_data("NVIDIA H200", H200))
    bench_view.print_graded(passed_report("triton_softmax", "cuda"), bench, True, "en")
    data = json.loads(capsys.readouterr().out)["bench"]
    assert {k: data[k] for k in ("kind", "task", "gpu", "bound", "torch_op")} == {
        "kind": "kernel", "task": "triton_softmax", "gpu": "NVIDIA H200", "bound": "memory", "torch_op": "torch.softmax"}
    assert set(data["roofs"]) == {"bandwidth_gbs", "bandwidth_source", "tflops", "tflops_source"}
    assert len(data["rows"]) == len(bench_of("triton_softmax").cases)
    row = data["rows"][0]
    assert set(row) == {"shape", "dims", "dtype", "bytes", "flops", "yours", "torch", "ratio_vs_torch"}
    assert set(row["yours"]) == set(row["torch"]) == {"seconds", "peak_bytes", "gbs", "tflops", "roof_fraction"}
    assert row["shape"] == "4096×1024" and row["dims"] == {"M": 4096, "N": 1024} and row["dtype"] == "float16"


@pytest.mark.parametrize("lang, words", [("en", "whose speed says nothing"), ("zh", "解释器运行")])
def test_cpu_kernel_bench_says_the_interpreter_is_not_timed(monkeypatch, lang, words):
    console = Console(file=io.StringIO(), width=220)
    monkeypatch.setattr(bench_view, "err", console)
    monkeypatch.setattr(bench_view.grade_view, "out", Console(file=io.StringIO()))
    bench_view.print_graded(passed_report("triton_softmax", "cpu"), None, False, lang)
    assert words in console.file.getvalue()
