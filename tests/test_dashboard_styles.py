"""Bare `drill` writes its escape codes itself (no rich.console at start-up, drill.views.ansi): exactly what rich
wrote for the same lines, in colour, under NO_COLOR, on a dumb terminal and piped; long rows wrap under themselves."""

from __future__ import annotations

import io
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console

from drill.practice import dashboard
from drill.history import store
from drill.views import dashboard_view


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def plan(drill_home):
    conn = store.connect()
    return dashboard.plan(conn, {"q1", "q2"}, [("sdpa", "failed"), ("mha", "untried")])


def rich_rendering(p, lang: str, terminal: bool) -> str:
    """The plan as the view printed it through rich before it wrote its own codes."""
    t = dashboard_view._t
    rows = [("streak", t("streak_value", lang, n=p.report.streak.current)),
            ("goal", t("goal_value", lang, done=0, goal=p.report.settings.daily_goal)),
            ("due", t("due_empty", lang)), ("unseen", t("unseen_value", lang, n=p.unseen_questions)),
            ("weakest", t("weakest_none", lang)), ("tasks", t("tasks_failed", lang, tasks=", ".join(p.failed_tasks)))]  # fmt: skip
    buffer = Terminal() if terminal else io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, highlight=False, width=200, soft_wrap=not terminal)
    width = max(cell_len(t(key, lang)) for key, _ in rows) + 2
    console.print(f"[bold]{t('title', lang)}[/]")
    for key, value in rows:
        label = t(key, lang)
        console.print(f"  {label}{' ' * (width - cell_len(label))}{value}", markup=False, highlight=False)
    console.print()
    console.print(f"[bold green]{t('next', lang)} ›[/] [bold]{p.next_command}[/]")
    console.print(f"[dim]{t('help', lang)}[/]")
    return buffer.getvalue()


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=str)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
def test_the_plan_is_what_rich_writes(env, lang, terminal, drill_home, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "200")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    p = plan(drill_home)
    expected = rich_rendering(p, lang, terminal)
    screen = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stdout", screen)
    dashboard_view.print_plan(p, lang, as_json=False)
    assert screen.getvalue() == expected
    assert ("\x1b[" in expected) == (terminal and env.get("TERM") != "dumb")


def test_a_long_row_wraps_under_its_value_in_a_narrow_terminal(drill_home, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    failed = ["sdpa", "mha", "causal", "kv_cache", "flash", "block", "padding", "cross"]
    p = dashboard.plan(store.connect(), {"q1"}, [(task, "failed") for task in failed])
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    dashboard_view.print_plan(p, "en", as_json=False)
    lines = screen.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "Coding" in line)
    column = lines[start].index("not passed yet")
    rows = [lines[start]] + [line for line in lines[start + 1 :] if line.startswith(" " * column) and line.strip()]
    assert len(rows) > 1 and all(len(line) <= 40 for line in rows)
    assert " ".join(r[column:] for r in rows) == "not passed yet: " + ", ".join(failed)
