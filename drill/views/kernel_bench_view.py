"""Rich rendering of a kernel task's ``--bench`` (drill/grade/kernel_bench.py's plain data), in English or Chinese."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from drill.views.console import out

WORDS = {
    "title": ("--bench · {task} · {gpu} · {bound}", "--bench · {task} · {gpu} · {bound}"),
    "memory": ("memory-bound: judged against the memory bandwidth", "访存受限：以显存带宽为上限"),
    "compute": ("compute-bound: judged against the tensor cores' FLOP/s", "计算受限：以 Tensor Core 算力为上限"),
    "columns": (("shape", "dtype", "yours", "yours ÷ torch", "yours {unit} (of roof)", "torch {unit} (of roof)"),
                ("形状", "类型", "你的", "你的 ÷ torch", "你的 {unit}（占峰值）", "torch {unit}（占峰值）")),
    "bandwidth": ("roof: {gbs:,.0f} GB/s memory bandwidth ({source})", "峰值：显存带宽 {gbs:,.0f} GB/s（{source}）"),
    "tflops": ("roof: {dtype} {tflops:,.1f} TFLOP/s dense ({source})", "峰值：{dtype} 稠密 {tflops:,.1f} TFLOP/s（{source}）"),
    "unknown": ("roof unknown for {gpu}: not in drill's datasheet table{why}; the figures above are absolute",
                "{gpu} 的峰值未知：drill 的规格表里没有它{why}；上面只是绝对数值"),
    "no_clock": (", and torch reports no memory clock", "，torch 也没有报告显存频率"),
    "timing": (None, "每格是 50 次调用的中位数：CUDA event 计时，每次调用前写 256 MiB 以清空 L2 缓存（与 triton.testing.do_bench "
                     "相同）；你的 kernel 在用户侧计时，torch 的算子在评测进程计时"),
    "work": ("work per call: the least bytes moved (each input read once, the output written once){flops}",
             "每次调用的工作量：最少搬运的字节数（每个输入读一次、输出写一次）{flops}"),
    "flops_too": (" and its FLOPs (a multiply-add is 2)", "，以及浮点运算次数（一次乘加算 2 次）"),
}  # fmt: skip
SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def print_kernel_bench(data: dict, lang: str) -> None:
    zh = lang == "zh"
    memory = data["bound"] == "memory"
    unit = "GB/s" if memory else "TFLOP/s"
    rate = "gbs" if memory else "tflops"
    title = WORDS["title"][zh].format(task=data["task"], gpu=data["gpu"], bound=WORDS[data["bound"]][zh])
    table = Table(title=escape(title), title_justify="left")
    for name in (*WORDS["columns"][zh][:3], data["torch_op"], *WORDS["columns"][zh][3:]):
        table.add_column(name.format(unit=unit), justify="right")
    for row in data["rows"]:
        yours, theirs = row["yours"], row["torch"]
        table.add_row(row["shape"], SHORT.get(row["dtype"], row["dtype"]), _time(yours["seconds"]), _time(theirs["seconds"]),
                      f"{row['ratio_vs_torch']:.2f}x", _rate(yours[rate], yours["roof_fraction"]), _rate(theirs[rate], theirs["roof_fraction"]))  # fmt: skip
    out.print(table)
    for line in roof_lines(data, zh):
        out.print(escape(line))
    out.print(f"[dim]{escape(WORDS['work'][zh].format(flops='' if memory else WORDS['flops_too'][zh]))}[/]")
    out.print(f"[dim]{escape(WORDS['timing'][zh] or data['timing'])}[/]")


def roof_lines(data: dict, zh: bool) -> list[str]:
    """The roof each fraction was taken of, with its source; or why there is none."""
    roofs = data["roofs"]
    if data["bound"] == "memory" and roofs["bandwidth_gbs"]:
        return [WORDS["bandwidth"][zh].format(gbs=roofs["bandwidth_gbs"], source=roofs["bandwidth_source"])]
    dtypes = dict.fromkeys(row["dtype"] for row in data["rows"])
    known = [d for d in dtypes if d in roofs["tflops"]]
    if data["bound"] == "compute" and known:
        return [WORDS["tflops"][zh].format(dtype=d, tflops=roofs["tflops"][d], source=roofs["tflops_source"]) for d in known]
    why = WORDS["no_clock"][zh] if data["bound"] == "memory" else ""
    return [WORDS["unknown"][zh].format(gpu=data["gpu"], why=why)]


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.2f} ms"


def _rate(value: float | None, share: float | None) -> str:
    """A rate, and its fraction of the roof where the roof is known."""
    if value is None:
        return "-"
    text = f"{value:,.0f}" if value >= 100 else f"{value:.1f}"
    return text if share is None else f"{text} ({share:.0%})"
