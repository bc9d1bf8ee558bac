"""Bare ``drill``: one screen with the streak, today's goal, what is due and the command to run next."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta

from rich.cells import cell_len

from drill.practice.dashboard import Forecast, Plan
from drill.text.i18n import plural, text
from drill.text.messages import Msg
from drill.views import ansi

TEXT = {
    "title": Msg("Today"),
    "streak": Msg("Streak"),
    "streak_value": (Msg("{n} day"), Msg("{n} days")),
    "streaks_off": Msg("off (drill config set streaks on)"),
    "goal": Msg("Goal"),
    "goal_value": Msg("{done}/{goal} questions or 1 whiteboard task"),
    "goal_met": Msg("met ✔"),
    "due": Msg("Due"),
    "due_value": (Msg("{n} question"), Msg("{n} questions")),
    "due_none": Msg("nothing now; the next one is due {when}"),
    "due_empty": Msg("nothing yet: answer a few questions first"),
    "unseen": Msg("New"),
    "unseen_value": (Msg("{n} question you have not seen"), Msg("{n} questions you have not seen")),
    "weakest": Msg("Weakest topic"),
    "weakest_none": Msg("not enough answers yet"),
    "tasks": Msg("Coding"),
    "tasks_due_now": Msg("{n} due for review: {tasks}"),
    "tasks_failed": Msg("not passed yet: {tasks}"),
    "tasks_next": Msg("next: {task}"),
    "tasks_done": Msg("every task passed"),
    "next": Msg("Next"),
    "help": Msg("All commands: drill --help"),
    "review_none": Msg("Nothing is due for review; the next question is due {when}."),
    "review_empty": Msg("Nothing is due for review yet."),
    "review_learn": Msg("Run `drill quiz` to learn new questions."),
    "tasks_none": Msg("No whiteboard task is due; the next one is due {when}."),
    "tasks_empty": Msg("No whiteboard task is due: tasks join the review once you have done one (drill whiteboard)."),
    "tasks_due": (Msg("Whiteboard task due too: {tasks} (drill review --tasks)"), Msg("Whiteboard tasks due too: {tasks} (drill review --tasks)")),
    "forecast": Msg("Coming up"),
    "forecast_questions": Msg("questions"),
    "forecast_tasks": Msg("tasks"),
    "forecast_value": Msg("{what}: {today} today · {tomorrow} tomorrow · {week} in 7 days"),
    "when": Msg("in {left} ({clock})"),
}


def _t(key: str, lang: str, **values: object) -> str:
    return text(plural(TEXT[key], values.get("n", 1)), lang, **values)


def _when(moment: datetime, lang: str = "en") -> str:
    """``in 10m (14:05)``, or with the date when it is not today: a bare clock time can look past already."""
    from drill.text.intervals import interval_text

    local, now = moment.astimezone(), datetime.now().astimezone()
    clock = local.strftime("%H:%M" if local.date() == now.date() else "%Y-%m-%d %H:%M")
    return _t("when", lang, left=interval_text(max(local - now, timedelta(0)), lang), clock=clock)


def print_plan(plan: Plan, lang: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps(plan.to_json(), ensure_ascii=False, indent=2))
        return
    rep, day = plan.report, plan.report.today_day
    rows = []
    if rep.settings.enabled:
        rows.append(("streak", _t("streak_value", lang, n=rep.streak.current)))
    else:
        rows.append(("streak", _t("streaks_off", lang)))
    goal = _t("goal_met", lang) if plan.goal_met else _t("goal_value", lang, done=day.answered, goal=rep.settings.daily_goal)
    rows.append(("goal", goal))
    if plan.due_questions:
        rows.append(("due", _t("due_value", lang, n=plan.due_questions)))
    elif plan.next_due:
        rows.append(("due", _t("due_none", lang, when=_when(plan.next_due, lang))))
    else:
        rows.append(("due", _t("due_empty", lang)))
    if plan.unseen_questions:
        rows.append(("unseen", _t("unseen_value", lang, n=plan.unseen_questions)))
    rows.append(("weakest", plan.weakest_topic or _t("weakest_none", lang)))
    if plan.due_tasks:
        tasks = _t("tasks_due_now", lang, tasks=", ".join(plan.due_tasks), n=len(plan.due_tasks))
    elif plan.failed_tasks:
        tasks = _t("tasks_failed", lang, tasks=", ".join(plan.failed_tasks))
    elif plan.next_task:
        tasks = _t("tasks_next", lang, task=plan.next_task)
    else:
        tasks = _t("tasks_done", lang)
    rows.append(("tasks", tasks))
    lines = forecast_lines(plan.question_forecast, plan.task_forecast, lang)
    rows += [("forecast" if i == 0 else "", line) for i, line in enumerate(lines)]

    # Written without rich.console, which bare `drill` cannot afford (drill.views.ansi); a test holds it equal to rich's.
    styles, columns = ansi.codes(), ansi.width()
    indent = max(cell_len(_t(key, lang)) for key, _ in rows if key) + 4
    lines = [ansi.paint(_t("title", lang), "bold", styles)]
    for key, value in rows:
        label = _t(key, lang) if key else ""
        lines.append(f"  {label}{' ' * (indent - 2 - cell_len(label))}" + _wrapped(value, indent, columns))
    lines += ["", ansi.paint(f"{_t('next', lang)} ›", "bold green", styles) + " " + ansi.paint(plan.next_command, "bold", styles),
              ansi.paint(_t("help", lang), "dim", styles)]  # fmt: skip
    sys.stdout.write("\n".join(lines) + "\n")


def _wrapped(value: str, indent: int, columns: int | None) -> str:
    """``value`` broken at spaces to fit ``columns`` after ``indent`` cells, continued under itself (never when piped)."""
    if columns is None or indent + cell_len(value) <= columns:
        return value
    room, lines, line = max(columns - indent, 20), [], ""
    for word in value.split(" "):
        if line and cell_len(line) + 1 + cell_len(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return f"\n{' ' * indent}".join([*lines, line])


def print_nothing_due(upcoming: datetime | None, lang: str, as_json: bool, *, tasks: bool = False, due_tasks: list[str] = ()) -> None:
    """``drill review`` (``--tasks``) with nothing due: when the next item is, as Anki says."""
    from drill.views.console import out

    if as_json:
        when = upcoming.isoformat(timespec="seconds") if upcoming else None
        print(json.dumps({"kind": "review", "status": "nothing-due", "next_due": when, "due_tasks": list(due_tasks),
                          "answered": 0, "total": 0, "results": []}))  # fmt: skip
        return
    if tasks:
        out.print(_t("tasks_none", lang, when=_when(upcoming, lang)) if upcoming else _t("tasks_empty", lang), markup=False)
        return
    out.print(_t("review_none", lang, when=_when(upcoming, lang)) if upcoming else _t("review_empty", lang), markup=False)
    if due_tasks:
        print_tasks_due(due_tasks, lang)
    else:
        out.print(_t("review_learn", lang), markup=False)


def forecast_lines(questions: Forecast | None, tasks: Forecast | None, lang: str) -> list[str]:
    """``questions: 3 today · 5 tomorrow · 12 in 7 days``, and the same for tasks; nothing for a kind with nothing due within the week."""
    shown = [("forecast_questions", questions), ("forecast_tasks", tasks)]
    return [
        _t("forecast_value", lang, what=_t(what, lang), today=f.today, tomorrow=f.tomorrow, week=f.week)
        for what, f in shown
        if f is not None and f.week
    ]


def print_forecast(questions: Forecast | None, tasks: Forecast | None, lang: str) -> None:
    """The forecast under ``drill review``'s header or its "nothing due" line."""
    from drill.views.console import out

    for line in forecast_lines(questions, tasks, lang):
        out.print(f"{_t('forecast', lang)} › {line}", markup=False)


def print_tasks_due(due_tasks: list[str], lang: str) -> None:
    from drill.views.console import out

    out.print(_t("tasks_due", lang, tasks=", ".join(due_tasks), n=len(due_tasks)), markup=False)
