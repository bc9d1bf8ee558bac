"""Rich rendering of whiteboard sessions and ``drill tasks``."""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from drill.grade.report import FAILING, Report
from drill.views import trace_view
from drill.views.console import out
from drill.whiteboard.catalog import Exercise, Status

MAX_FAILURES = 3
NARROW_COLUMNS = 80  # `drill tasks` narrower than this drops the track column
TASK_WORDS = {  # `drill tasks` in the terminal and in a notebook (drill.notebook.render), English and Chinese
    "title": ("Whiteboard tasks", "白板题"),
    "columns": (("track", "task", "level", "title", "status", "best"), ("方向", "题目", "难度", "名称", "状态", "最佳用时")),
    "untried": ("untried", "未尝试"),
    "failed": ("failed", "未通过"),
    "passed": ("passed", "已通过"),
    "start": ("Start one with: drill whiteboard TASK", "开始一道题：drill whiteboard 加上表中的题目 id"),
}
STATE_STYLES = {"untried": "dim", "failed": "red", "passed": "green"}


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


WORDS: dict[str, tuple[str, str]] = {  # every line a session prints, as a Chinese engineer would put it
    "resuming": ("Resuming your file [bold]{path}[/]; {minutes} min on the clock.", "继续你的文件 [bold]{path}[/]，限时 {minutes} 分钟。"),
    "written": ("Template written to [bold]{path}[/]; {minutes} min on the clock.", "模板已写入 [bold]{path}[/]，限时 {minutes} 分钟。"),
    "keys": ("Save the file to re-grade.  [bold]h[/] hint  ·  [bold]r[/] reset the template  ·  [bold]s[/] solution  ·  [bold]q[/] quit",
             "保存文件即重新评分。  [bold]h[/] 提示  ·  [bold]r[/] 恢复模板  ·  [bold]s[/] 看答案  ·  [bold]q[/] 退出"),
    "not_yet": ("[bold]not implemented yet[/]: {where} still raises NotImplementedError. The docstring above it says what to write.",
                "[bold]还没实现[/]：{where}仍在抛出 NotImplementedError。要写什么，看它上面的 docstring。"),
    "line_of": ("line {n} of {path}", "{path} 第 {n} 行"),
    "confirm_solution": ("Show the solution now? This session ends unsolved and {task} is rated Again. [bold]y[/] to show it, any other key keeps going.",
                         "现在看答案？本次练习按未解出结束，{task} 评为“重来”。按 [bold]y[/] 查看，其他键继续写。"),
    "solution_kept": ("solution not shown: keep going", "未看答案：继续写"),
    "offer": ("[bold]s[/] shows the reference solution and your diff  ·  any other key ends ({seconds} s)",
              "按 [bold]s[/] 查看参考解法和你的 diff  ·  其他键结束（{seconds} 秒）"),
    "not_attempted": ("Not attempted (no failing save): no rating, {task}'s schedule is unchanged.",
                      "未作答（没有未通过的保存）：不评分，{task} 的复习计划不变。"),
    "starting": ("starting the grader (imports torch once)...", "正在启动评分器（只加载一次 torch）……"),
    "clock": ("⏱ {clock} left", "⏱ 剩余 {clock}"),
    "passed_all": ("[bold green]PASSED[/] all {total} checks", "[bold green]通过[/] 全部 {total} 项检查"),
    "passed_warn": ("[bold green]PASSED[/] {ok} of {total} checks, [yellow]{warn} warn[/]", "[bold green]通过[/] {total} 项检查中 {ok} 项通过，[yellow]{warn} 项警告[/]"),
    "failed": ("[bold red]FAILED[/] {failing} of {total} checks failed", "[bold red]未通过[/] {total} 项检查中 {failing} 项失败"),
    "left": ("⏱ {clock} left", "⏱ 剩余 {clock}"),
    "line": ("line {n}", "第 {n} 行"),
    "fix": ("fix:", "改法："),
    "possibly": ("possibly {code}", "可能是 {code}"),
    "more": ("... and {n} more (drill grade FILE shows all)", "……还有 {n} 项（drill grade 文件 可看全部）"),
    "already": ("This file already passes: not counted as a solve. [bold]r[/] starts over from the template (your file is backed up), [bold]q[/] quits; --record counts it.",
                "这个文件已经能通过：不算作本次解出。按 [bold]r[/] 从模板重来（原文件会备份），按 [bold]q[/] 退出；加 --record 则记为解出。"),
    "hint": ("hint {number}/{total}", "提示 {number}/{total}"),
    "no_more": ("No more hints: all {total} are shown above.", "没有更多提示了：{total} 条都已在上面。"),
    "confirm": ("Reset {path} to the template? Your file is kept as {backup}. [bold]y[/] to reset, any other key keeps it.",
                "把 {path} 恢复为模板？原文件会备份为 {backup}。按 [bold]y[/] 确认，其他键取消。"),
    "reset": ("reset: {path} is the template again", "已恢复：{path} 又是模板了"),
    "backup": ("your previous file: {backup}", "原文件备份在：{backup}"),
    "kept": ("not reset: your file is unchanged", "未恢复：文件保持不变"),
    "times_up": ("⏰ Time's up!", "⏰ 时间到！"),
    "solved": ("[bold green]Solved {task} in {clock}[/] · saved to your history", "[bold green]{clock} 解出 {task}[/] · 已记入历史"),
    "time_is_up": ("Time's up after {clock}; your file is kept, run the same command to resume.", "{clock} 时间到；文件已保留，再运行同一命令即可继续。"),
    "stopped": ("Stopped after {clock}; your file is kept, run the same command to resume.", "{clock} 后结束；文件已保留，再运行同一命令即可继续。"),
    "rated": ("Rated [bold]{rating}[/] ({why}): {task} comes back in {interval}.", "评为[bold]{rating}[/]（{why}）：{interval}后再练 {task}。"),
    "rated_today": ("{task} was already reviewed today: its schedule is unchanged.", "{task} 今天已复习过：复习计划不变。"),
    "why_again": ("not solved", "未解出"),
    "why_hard": ("{hints} hint{hs}, {saves} failing save{ss}", "用了 {hints} 条提示，{saves} 次未通过的保存"),
    "why_good": ("solved without hints", "未用提示解出"),
    "why_easy": ("solved without hints in a third of the time", "未用提示，三分之一时间内解出"),
}


def say(key: str, lang: str, **values: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**values)


class SessionView:
    """What a watch-mode session prints: one compact block per save, and a clock line redrawn every second."""

    def __init__(self, lang: str):
        self.lang = lang
        self._clock_shown = False
        self._task, self._path = "", Path()

    def _print(self, text: str) -> None:
        if self._clock_shown:  # the clock line is rewritten in place: clear it before a line that stays
            out.file.write("\r\x1b[2K")
            self._clock_shown = False
        out.print(text)

    def starting(self, exercise: Exercise, path: Path, resumed: bool, minutes: int) -> None:
        title = exercise.title.get(self.lang, exercise.title["en"])
        self._task, self._path = exercise.id, path
        out.rule(f"[bold]{escape(title)}[/] · {exercise.id} · {exercise.level}")
        self._print(say("resuming" if resumed else "written", self.lang, path=escape(str(path)), minutes=minutes))
        self._print(say("keys", self.lang))
        self._print(f"[dim]{say('starting', self.lang)}[/]")

    def tick(self, left_s: float) -> None:
        if not out.is_terminal:
            return  # a pipe gets the clock with each report only
        out.file.write("\r\x1b[2K")
        out.print(f"[dim]{say('clock', self.lang, clock=clock(left_s))}[/]", end="")
        out.file.flush()
        self._clock_shown = True

    def graded(self, report: Report, left_s: float) -> None:
        failing = [c for c in report.checks if c.status in FAILING]
        warnings = [c for c in report.checks if c.status == "warn"]
        total = len(report.checks)
        took = f"({report.duration_s:.2f} s)"
        if report.passed:
            verdict = say("passed_warn", self.lang, ok=total - len(warnings), total=total, warn=len(warnings)) if warnings else say("passed_all", self.lang, total=total)
            self._print(f"{verdict}  {took}")
        elif [d.code for d in report.diagnosis] == ["not-implemented"]:  # the untouched template: one line, not 20 checks
            line, path = (report.first_divergence or {}).get("line"), escape(str(self._path))
            where = say("line_of", self.lang, n=line, path=path) if line else path
            self._print(f"{say('not_yet', self.lang, where=where)}  {took}")
            return
        else:
            self._print(f"{say('failed', self.lang, failing=len(failing), total=total)}  {took}  {say('left', self.lang, clock=clock(left_s))}")
            found = report.first_divergence
            if found:  # where first: "line 7: mask applied after softmax"
                what = report.diagnosis[0].text(self.lang)[0] if report.diagnosis else trace_view.message(found, self.lang)
                self._print(f"  [bold]{say('line', self.lang, n=found['line'])}:[/] {escape(what)}  [dim]{escape(found['code'])}[/]")
        for d in report.diagnosis:
            message, fix = d.text(self.lang)
            self._print(f"  [bold red]{d.code}[/] {escape(message)}\n    [green]{say('fix', self.lang)}[/] {escape(fix)}")
        for d in report.candidates:  # possible only: the hint never follows it
            self._print(f"  [yellow]{say('possibly', self.lang, code=d.code)}[/] {escape(d.text(self.lang)[0])}")
        for check in failing[:MAX_FAILURES]:
            self._print(f"  [red]✗[/] {check.id}: {escape(check.text(self.lang))}")
        if len(failing) > MAX_FAILURES:
            self._print(f"  [dim]{say('more', self.lang, n=len(failing) - MAX_FAILURES)}[/]")
        for check in warnings[:MAX_FAILURES]:
            self._print(f"  [yellow]![/] {check.id}: {escape(check.text(self.lang))}")

    def already_passing(self) -> None:
        self._print(f"[yellow]{say('already', self.lang)}[/]")

    def hint(self, number: int, total: int, text: str) -> None:
        self._print(f"[yellow]{say('hint', self.lang, number=number, total=total)}[/] {escape(text)}")

    def no_more_hints(self, total: int) -> None:
        self._print(f"[yellow]{say('no_more', self.lang, total=total)}[/]")

    def confirm_reset(self, path: Path, backup: Path) -> None:
        self._print(f"[yellow]{say('confirm', self.lang, path=escape(str(path)), backup=escape(backup.name))}[/]")

    def reset(self, path: Path, backup: Path | None) -> None:
        self._print(f"[yellow]{say('reset', self.lang, path=escape(str(path)))}[/]")
        if backup is not None:
            self._print(f"  {say('backup', self.lang, backup=escape(str(backup)))}")

    def reset_kept(self) -> None:
        self._print(say("kept", self.lang))

    def confirm_solution(self) -> None:
        self._print(f"[yellow]{say('confirm_solution', self.lang, task=self._task)}[/]")

    def solution_kept(self) -> None:
        self._print(say("solution_kept", self.lang))

    def offer_solution(self) -> None:
        from drill.whiteboard.session import OFFER_S

        self._print(say("offer", self.lang, seconds=f"{OFFER_S:g}"))

    def finished(self) -> None:
        """Leave the cursor on a fresh line for the closing message."""
        if self._clock_shown:
            out.file.write("\r\x1b[2K")
            out.file.flush()
            self._clock_shown = False

    def times_up(self) -> None:
        out.file.write("\a")  # the terminal's bell
        self._print(f"[bold red]{say('times_up', self.lang)}[/]")


RATING_WHY = {1: "why_again", 2: "why_hard", 3: "why_good", 4: "why_easy"}


def print_outcome(outcome, streak_line: str, lang: str = "en", review=None) -> None:
    """The closing lines, the same for q, Ctrl-C and time up; ``review``: session.record's result."""
    from drill.text.i18n import t
    from drill.text.intervals import interval_text

    if outcome.passed:
        out.print(say("solved", lang, task=outcome.task, clock=clock(outcome.seconds)))
    else:
        out.print(say("time_is_up" if outcome.stopped == "time" else "stopped", lang, clock=clock(outcome.seconds)))
    if review is None:
        out.print(f"[dim]{say('not_attempted', lang, task=outcome.task)}[/]")
    else:
        rating, interval = review
        if rating is None:
            out.print(f"[dim]{say('rated_today', lang, task=outcome.task)}[/]")
        else:
            why = say(RATING_WHY[int(rating)], lang, hints=outcome.hints, saves=outcome.failing_saves,
                      hs="s" * (outcome.hints != 1), ss="s" * (outcome.failing_saves != 1))  # fmt: skip
            out.print(say("rated", lang, rating=t(rating.name, lang), why=why, task=outcome.task, interval=interval_text(interval, lang)))
    if streak_line:
        out.print(f"[dim]{escape(streak_line)}[/]")


TRACK_NAMES = {
    "attention": ("attention", "注意力"),
    "positions": ("positions", "位置编码"),
    "inference": ("inference", "推理"),
    "building blocks": ("building blocks", "基础模块"),
    "training": ("training", "训练"),
    "alignment": ("alignment", "对齐"),
    "decoding": ("decoding", "解码"),
    "tokenization": ("tokenization", "分词"),
    "ml fundamentals": ("ML fundamentals", "机器学习基础"),
    "systems": ("systems", "分布式系统"),
    "kernels": ("kernels", "算子"),
}


def print_tasks(statuses: list[Status], as_json: bool, lang: str) -> None:
    if as_json:
        print(json.dumps([s.to_json() for s in statuses], ensure_ascii=False, indent=2))
        return
    narrow = out.width < NARROW_COLUMNS  # the track goes on a row of its own; ids never shrink, titles wrap
    zh = lang == "zh"
    table = Table(title=TASK_WORDS["title"][zh], title_justify="left")
    widest = max((len(s.exercise.id) for s in statuses), default=4)
    columns = list(zip(TASK_WORDS["columns"][0], TASK_WORDS["columns"][zh]))
    for key, name in columns[1:] if narrow else columns:
        table.add_column(name, justify="right" if key == "best" else "left", no_wrap=key == "task",
                         min_width=widest if key == "task" else None, overflow="fold" if key == "title" else "ellipsis")  # fmt: skip
    track = None
    for s in statuses:  # the catalog's order: by track, then by level
        if track is not None and s.exercise.track != track:
            table.add_section()
        name = TRACK_NAMES[s.exercise.track][zh]
        if narrow and s.exercise.track != track:
            table.add_row(f"[bold]{name}[/]", "", "", "", "")
        shown = name if s.exercise.track != track else ""
        track = s.exercise.track
        best = "-" if s.best_seconds is None else clock(s.best_seconds)
        row = (s.exercise.id, s.exercise.level, s.exercise.title.get(lang, s.exercise.title["en"]),
               f"[{STATE_STYLES[s.state]}]{TASK_WORDS[s.state][zh]}[/]", best)  # fmt: skip
        table.add_row(*row) if narrow else table.add_row(shown, *row)
    out.print(table)
    out.print(f"[dim]{TASK_WORDS['start'][zh]}[/]")
