"""A full mock interview on screen: the plan, a header per part, and the closing scorecard."""

from __future__ import annotations

import json

from rich.markup import escape

from drill.text.i18n import plural, text
from drill.text.messages import Msg
from drill.views.console import out

WORDS = {
    "plan": (Msg("Mock interview · {minutes} min: a 60-second pitch, {n} concept question with follow-ups, then {task} on the whiteboard."),
             Msg("Mock interview · {minutes} min: a 60-second pitch, {n} concept questions with follow-ups, then {task} on the whiteboard.")),
    "part_pitch": Msg("Part 1 · pitch: answer as you would aloud, in about 60 seconds"),
    "part_mock": Msg("Part 2 · concepts and follow-ups"),
    "part_whiteboard": Msg("Part 3 · whiteboard: the rest of the clock"),
    "scorecard": Msg("Scorecard"),
    "pitch": Msg("Pitch"),
    "concepts": Msg("Concepts"),
    "whiteboard": Msg("Whiteboard"),
    "well": Msg("went well"),
    "next": Msg("drill next"),
    "pitch_good": Msg("{question}: {covered}/{points} key points covered"),
    "pitch_weak": Msg("{question}: only {covered}/{points} key points covered"),
    "concepts_right": Msg("{n}/{asked} right: {ids}"),
    "concepts_wrong": Msg("missed: {ids}"),
    "concepts_none": Msg("no concept question answered"),
    "wb_passed": (Msg("{task} solved in {clock}, {hints} hint"), Msg("{task} solved in {clock}, {hints} hints")),
    "wb_unsolved": Msg("{task} not solved"),
    "wb_solution": Msg("{task}: solution asked for before a pass"),
    "wb_not_attempted": Msg("{task} not attempted"),
    "wb_no_time": Msg("{task}: no time left for the whiteboard"),
    "wb_codes": Msg("mistakes on the way: {codes}"),
    "stopped": Msg("Interview stopped early ({why}); the parts played are saved."),
    "saved": Msg("Saved to your history (session {id})."),
}  # fmt: skip


def say(key: str, lang: str, *counts: int, **values: object) -> str:
    return text(plural(WORDS[key], *counts), lang, **values)


def plan(minutes: int, concepts: int, task: str, lang: str) -> None:
    out.print(f"[bold]{say('plan', lang, concepts, minutes=minutes, n=concepts, task=task)}[/]")


def part(kind: str, lang: str) -> None:
    out.rule(f"[bold]{say('part_' + kind, lang)}[/]")


def _lines(p: dict, lang: str) -> tuple[list[str], list[str]]:
    """(went well, drill next) of one part."""
    from drill.views.whiteboard_view import clock

    well: list[str] = []
    todo: list[str] = []
    if p["part"] == "pitch" and p["question"]:
        enough = p["passed"]
        said = say("pitch_good" if enough else "pitch_weak", lang, question=p["question"], covered=p["covered"], points=p["key_points"])
        (well if enough else todo).append(said)
    elif p["part"] == "concepts":
        if p["right"]:
            well.append(say("concepts_right", lang, n=len(p["right"]), asked=p["asked"], ids=", ".join(p["right"])))
        if p["wrong"]:
            todo.append(say("concepts_wrong", lang, ids=", ".join(p["wrong"])))
        if not p["asked"]:
            todo.append(say("concepts_none", lang))
    elif p["part"] == "whiteboard":
        result = p["result"]
        if result == "passed":
            hints = p["hints"]
            well.append(say("wb_passed", lang, hints, task=p["task"], clock=clock(p["seconds"]), hints=hints))
        else:
            key = {"unsolved": "wb_unsolved", "solution": "wb_solution", "not attempted": "wb_not_attempted"}.get(result, "wb_no_time")
            todo.append(say(key, lang, task=p["task"]))
        if p.get("codes"):
            todo.append(say("wb_codes", lang, codes=", ".join(p["codes"])))
    return well, todo


def print_scorecard(card, session_id: int, lang: str, as_json: bool = False) -> None:
    if as_json:
        print(json.dumps({"session": session_id, **card.to_json()}, ensure_ascii=False, indent=2))
        return
    out.rule(f"[bold]{say('scorecard', lang)}[/]")
    for p in card.parts:
        well, todo = _lines(p, lang)
        out.print(f"[bold]{say(p['part'], lang)}[/]")
        for line in well:
            out.print(f"  [green]✔ {say('well', lang)}:[/] {escape(line)}")
        for line in todo:
            out.print(f"  [yellow]→ {say('next', lang)}:[/] {escape(line)}")
        out.print(f"    [dim]$[/] [bold]{escape(p['command'])}[/]")
    if card.stopped:
        from drill.text.i18n import t

        out.print(f"[yellow]{say('stopped', lang, why=t('stopped_' + card.stopped, lang))}[/]")
    out.print(f"[dim]{say('saved', lang, id=session_id)}[/]")
