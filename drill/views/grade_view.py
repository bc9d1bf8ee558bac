"""Rich rendering of ``drill grade``: a progress bar while checks run, then the report."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from drill.grade.report import Report
from drill.views import trace_view
from drill.views.console import err, out

MARKS = {
    "pass": "[green]✓ pass[/]",
    "fail": "[red]✗ fail[/]",
    "error": "[red]✗ error[/]",
    "warn": "[yellow]! warn[/]",
    "skip": "[dim]- skip[/]",
}
MARKS_ZH = {"pass": "[green]✓ 通过[/]", "fail": "[red]✗ 失败[/]", "error": "[red]✗ 出错[/]", "warn": "[yellow]! 警告[/]", "skip": "[dim]- 跳过[/]"}
CATEGORY_ZH = {"shape": "形状", "mask-leak": "掩码泄漏", "numerical": "数值", "stability": "稳定性", "gradient": "梯度",
               "rules": "规则", "robustness": "鲁棒性"}  # fmt: skip
STATUS_ZH = {"pass": "通过", "fail": "失败", "error": "出错", "warn": "警告", "skip": "跳过"}
WORDS = {  # the report's frame; check ids stay as the grader wrote them, the evidence comes in both languages
    "title": ("drill grade · task {task} · device {device}", "drill grade · 题目 {task} · 设备 {device}"),
    "columns": (("status", "check", "category", "evidence"), ("状态", "检查项", "类别", "证据")),
    "diagnosis": ("diagnosis", "诊断"),
    "fix": ("fix:", "改法："),
    "possibly": ("possibly {code}", "可能是 {code}"),
    "no_code": ("No single classic mistake explains the failures; read the evidence above.", "没有哪个典型错误能解释这些失败；请看上面的证据。"),
    "passed": ("PASSED", "通过"),
    "starting": ("starting the grader (import torch)", "正在启动评分器（导入 torch）"),
    "grading": ("grading {task} on {device}", "正在 {device} 上评测 {task}"),
    "checked": ("checked {check}", "已检查 {check}"),
    "failed": ("FAILED", "未通过"),
}


@contextmanager
def progress(enabled: bool, lang: str = "en") -> Iterator[Callable[[dict], None]]:
    """Yield an ``on_event`` callback that advances a progress bar on stderr: a no-op when disabled or when stderr
    is no terminal (a transient bar there would only leave an empty line)."""
    zh = lang == "zh"
    if not enabled or not err.is_terminal:
        yield lambda event: None
        return
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
    )
    with bar:
        task = bar.add_task(WORDS["starting"][zh], total=None)

        def on_event(event: dict) -> None:
            if event.get("event") == "start":
                bar.update(task, total=event["total"], description=WORDS["grading"][zh].format(task=event["task"], device=event["device"]))
            elif event.get("event") == "check":
                bar.update(task, advance=1, description=WORDS["checked"][zh].format(check=event["check"]["id"]))

        yield on_event


def print_report(report: Report, as_json: bool, lang: str = "en") -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    zh = lang == "zh"
    marks = MARKS_ZH if zh else MARKS
    table = Table(title=WORDS["title"][zh].format(task=report.task, device=report.device), title_justify="left")
    status, check_col, category, evidence = WORDS["columns"][zh]
    table.add_column(status, no_wrap=True)
    table.add_column(check_col, no_wrap=True)
    table.add_column(category, style="dim", no_wrap=True)
    table.add_column(evidence)
    for check in report.checks:
        table.add_row(marks.get(check.status, check.status), check.id, CATEGORY_ZH.get(check.category, check.category) if zh else check.category,
                      escape(check.text(lang)))  # fmt: skip
    out.print(table)
    if report.trace is not None:
        for line in trace_view.trace_lines(report.trace, lang):
            out.print(line, overflow="ellipsis", no_wrap=True)
        if report.first_divergence:
            out.print(f"[bold red]{escape(trace_view.where(report.first_divergence, lang))}[/]")
    for picture in report.pictures:
        for line in trace_view.picture_lines(picture, lang):
            out.print(line, no_wrap=True)
    if report.diagnosis or report.candidates:
        lines = [f"[bold]{escape(trace_view.where(report.first_divergence, lang))}[/]"] if report.first_divergence else []
        for d in report.diagnosis:
            message, fix = d.text(lang)
            lines.append(f"[bold red]{d.code}[/]  {escape(message)}\n   [green]{WORDS['fix'][zh]}[/] {escape(fix)}")
        for d in report.candidates:  # not confirmed by the outputs: never stored or counted
            message, fix = d.text(lang)
            lines.append(f"[yellow]{WORDS['possibly'][zh].format(code=d.code)}[/]  {escape(message)}\n   [green]{WORDS['fix'][zh]}[/] {escape(fix)}")
        out.print(Panel("\n".join(lines), title=WORDS["diagnosis"][zh], title_align="left", border_style="red"))
    elif not report.passed:
        if report.first_divergence and report.trace is None:
            out.print(f"[bold red]{escape(trace_view.where(report.first_divergence, lang))}[/]")
        out.print(f"[dim]{WORDS['no_code'][zh]}[/]")
    counts = {s: sum(c.status == s for c in report.checks) for s in MARKS}
    summary = ("，" if zh else ", ").join(f"{STATUS_ZH[s]} {n}" if zh else f"{n} {s}" for s, n in counts.items() if n)
    verdict = f"[bold green]{WORDS['passed'][zh]}[/]" if report.passed else f"[bold red]{WORDS['failed'][zh]}[/]"
    seed = "" if report.seed is None else (f"，种子 {report.seed}" if zh else f", seed {report.seed}")
    out.print(f"{verdict}  {summary}  ({report.duration_s:.1f} s{seed})")
