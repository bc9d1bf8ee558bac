"""Rich rendering of a kernel task's ``--bench`` (drill/grade/kernel_bench.py's plain data), in English or Chinese."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from drill.text.i18n import text
from drill.text.messages import Msg, translated
from drill.views.console import out

WORDS = {
    "title": "--bench · {task} · {gpu} · {bound}",
    "memory": Msg("memory-bound: judged against the memory bandwidth"),
    "compute": Msg("compute-bound: judged against the tensor cores' FLOP/s"),
    "columns": (Msg("shape"), Msg("dtype"), Msg("yours"), Msg("yours ÷ torch"), Msg("yours {unit} (of roof)"), Msg("torch {unit} (of roof)")),
    "bandwidth": Msg("roof: {gbs:,.0f} GB/s memory bandwidth ({source})"),
    "tflops": Msg("roof: {dtype} {tflops:,.1f} TFLOP/s dense ({source})"),
    "unknown": Msg("roof unknown for {gpu}: not in drill's datasheet table{why}; the figures above are absolute"),
    "no_clock": Msg(", and torch reports no memory clock"),
    # the judge's own words (drill.grade.kernel_bench.TIMING), named here so that the catalog holds them
    "timing": Msg("median of 50 calls on CUDA events, each after a 256 MiB write that evicts the L2 cache "
                  "(as triton.testing.do_bench times); yours on the user side, torch's op in the judge"),
    "work": Msg("work per call: the least bytes moved (each input read once, the output written once){flops}"),
    "flops_too": Msg(" and its FLOPs (a multiply-add is 2)"),
}  # fmt: skip
SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def print_kernel_bench(data: dict, lang: str) -> None:
    memory = data["bound"] == "memory"
    unit = "GB/s" if memory else "TFLOP/s"
    rate = "gbs" if memory else "tflops"
    title = text(WORDS["title"], lang, task=data["task"], gpu=data["gpu"], bound=text(WORDS[data["bound"]], lang))
    table = Table(title=escape(title), title_justify="left")
    columns = [text(name, lang, unit=unit) for name in WORDS["columns"]]
    for name in (*columns[:3], data["torch_op"], *columns[3:]):
        table.add_column(name, justify="right")
    for row in data["rows"]:
        yours, theirs = row["yours"], row["torch"]
        table.add_row(row["shape"], SHORT.get(row["dtype"], row["dtype"]), _time(yours["seconds"]), _time(theirs["seconds"]),
                      f"{row['ratio_vs_torch']:.2f}x", _rate(yours[rate], yours["roof_fraction"]), _rate(theirs[rate], theirs["roof_fraction"]))  # fmt: skip
    out.print(table)
    for line in roof_lines(data, lang):
        out.print(escape(line))
    out.print(f"[dim]{escape(text(WORDS['work'], lang, flops='' if memory else text(WORDS['flops_too'], lang)))}[/]")
    out.print(f"[dim]{escape(translated(Msg(data['timing']), lang))}[/]")


def roof_lines(data: dict, lang: str) -> list[str]:
    """The roof each fraction was taken of, with its source; or why there is none."""
    roofs = data["roofs"]
    if data["bound"] == "memory" and roofs["bandwidth_gbs"]:
        return [text(WORDS["bandwidth"], lang, gbs=roofs["bandwidth_gbs"], source=roofs["bandwidth_source"])]
    dtypes = dict.fromkeys(row["dtype"] for row in data["rows"])
    known = [d for d in dtypes if d in roofs["tflops"]]
    if data["bound"] == "compute" and known:
        return [text(WORDS["tflops"], lang, dtype=d, tflops=roofs["tflops"][d], source=roofs["tflops_source"]) for d in known]
    why = text(WORDS["no_clock"], lang) if data["bound"] == "memory" else ""
    return [text(WORDS["unknown"], lang, gpu=data["gpu"], why=why)]


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.2f} ms"


def _rate(value: float | None, share: float | None) -> str:
    """A rate, and its fraction of the roof where the roof is known."""
    if value is None:
        return "-"
    text = f"{value:,.0f}" if value >= 100 else f"{value:.1f}"
    return text if share is None else f"{text} ({share:.0%})"
