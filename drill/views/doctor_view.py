"""``drill doctor``: one labelled line per fact, in the user's language."""

from __future__ import annotations

from rich.cells import cell_len
from rich.markup import escape

from drill.views.console import out

LABELS = {
    "drill": ("drill", "drill"),
    "python": ("python", "Python"),
    "home": ("data home", "数据目录"),
    "banks": ("banks", "题库"),
    "torch": ("torch", "torch"),
    "cuda": ("cuda", "CUDA"),
    "sandbox": ("sandbox", "沙箱"),
    "triton": ("triton", "Triton"),
}
PROTECTIONS = {  # drill.grade.user.sandbox.available()'s names: what each keeps from the code drill grades
    "non-dumpable drill processes": ("drill's processes closed to /proc (non-dumpable)", "drill 的进程对 /proc 关闭（不可转储）"),
    "user namespace": ("graded code in its own user namespace", "被评分的代码运行在独立的用户命名空间"),
    "landlock writes": ("graded code writes only its temporary folder (Landlock)", "被评分的代码只能写自己的临时目录（Landlock）"),
    "landlock signals": ("graded code cannot signal drill's processes (Landlock)", "被评分的代码不能向 drill 的进程发信号（Landlock）"),
}
WORDS = {
    "questions": ("{n} questions", "{n} 道题"),
    "broken": ("[red]broken[/]: {why}", "[red]无法加载[/]：{why}"),
    "no_torch": ("not installed (needed only by drill grade)", "未安装（只有 drill grade 需要）"),
    "cuda_yes": ("yes ({name})", "可用（{name}）"),
    "cuda_no": ("no (torch build: {build})", "不可用（torch 构建：{build}）"),
    "cpu_only": ("CPU only", "仅 CPU"),
    "no_triton": ("not installed (needed only by the kernels track: {how})", "未安装（只有 kernel 题需要：{how}）"),
    "compiled": ("{version}: kernels compiled for the GPU", "{version}：kernel 为 GPU 编译运行"),
    "interpreted": ("{version}: kernels run under Triton's interpreter on CPU (no GPU here), graded but not timed",
                    "{version}：没有 GPU，kernel 在 CPU 上由 Triton 解释器运行，可以评分但不计时"),
    "cuda_slow": ("unknown: torch took over {seconds} s to start in a child process", "未知：子进程里启动 torch 超过了 {seconds} 秒"),
}


def word(key: str, lang: str, **values) -> str:
    return WORDS[key][lang == "zh"].format(**values)


def line(key: str, value: str, lang: str) -> None:
    label = LABELS[key][lang == "zh"]
    out.print(f"{label}{' ' * (11 - cell_len(label))}{value}")


def print_sandbox(protections: list[tuple[str, str | None]], lang: str) -> None:
    """One line per protection of ``drill grade``: active, or not available and why."""
    zh = lang == "zh"
    active = sum(why is None for _, why in protections)
    line("sandbox", f"{active}/{len(protections)} " + ("项保护已启用" if zh else "protections active"), lang)
    for name, why in protections:
        state = ("[green]已启用[/]" if zh else "[green]active[/]") if why is None else \
            ("[yellow]不可用[/]：" if zh else "[yellow]not available[/]: ") + escape(why)  # fmt: skip
        out.print(f"  {PROTECTIONS[name][zh]}: {state}" if not zh else f"  {PROTECTIONS[name][zh]}：{state}")


def print_sources(bank, lang: str) -> None:
    for path in bank.files:
        n = sum(1 for p, _ in bank.origins.values() if p == path)
        out.print(f"  {escape(str(path))}  [dim]({word('questions', lang, n=n)})[/]")


def print_triton(version: str | None, gpu: bool, lang: str) -> None:
    """Whether the kernels track runs here, and how: compiled on a GPU, else interpreted on CPU."""
    from drill.grade.kernel_env import HOW_TO_GET

    if version is None:
        line("triton", word("no_triton", lang, how=escape(HOW_TO_GET)), lang)
    else:
        line("triton", word("compiled" if gpu else "interpreted", lang, version=escape(version)), lang)
