"""A full mock interview on screen: the plan, a header per part, and the closing scorecard."""

from __future__ import annotations

import json

from rich.markup import escape

from drill.views.console import out

WORDS: dict[str, tuple[str, str]] = {
    "plan": ("Mock interview · {minutes} min: a 60-second pitch, {n} concept question{s} with follow-ups, then {task} on the whiteboard.",
             "模拟面试 · {minutes} 分钟：60 秒讲解、{n} 道概念题及追问，最后白板写 {task}。"),
    "part_pitch": ("Part 1 · pitch: answer as you would aloud, in about 60 seconds", "第 1 部分 · 60 秒讲解：像面试时口头回答那样写"),
    "part_mock": ("Part 2 · concepts and follow-ups", "第 2 部分 · 概念题与追问"),
    "part_whiteboard": ("Part 3 · whiteboard: the rest of the clock", "第 3 部分 · 白板编程：用剩下的时间"),
    "scorecard": ("Scorecard", "评分卡"),
    "pitch": ("Pitch", "讲解"),
    "concepts": ("Concepts", "概念"),
    "whiteboard": ("Whiteboard", "白板"),
    "well": ("went well", "做得好"),
    "next": ("drill next", "接下来练"),
    "pitch_good": ("{question}: {covered}/{points} key points covered", "{question}：覆盖 {covered}/{points} 个要点"),
    "pitch_weak": ("{question}: only {covered}/{points} key points covered", "{question}：只覆盖了 {covered}/{points} 个要点"),
    "concepts_right": ("{n}/{asked} right: {ids}", "答对 {n}/{asked}：{ids}"),
    "concepts_wrong": ("missed: {ids}", "答错：{ids}"),
    "concepts_none": ("no concept question answered", "没有回答概念题"),
    "wb_passed": ("{task} solved in {clock}, {hints} hint{hs}", "{clock} 解出 {task}，用了 {hints} 条提示"),
    "wb_unsolved": ("{task} not solved", "{task} 未解出"),
    "wb_solution": ("{task}: solution asked for before a pass", "{task}：通过前就看了答案"),
    "wb_not_attempted": ("{task} not attempted", "{task} 未作答"),
    "wb_no_time": ("{task}: no time left for the whiteboard", "{task}：没有剩余时间做白板题"),
    "wb_codes": ("mistakes on the way: {codes}", "过程中的错误：{codes}"),
    "stopped": ("Interview stopped early ({why}); the parts played are saved.", "面试提前结束（{why}）；已完成的部分已保存。"),
    "saved": ("Saved to your history (session {id}).", "已记入历史（会话 {id}）。"),
}


def say(key: str, lang: str, **values: object) -> str:
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**values)


def plan(minutes: int, concepts: int, task: str, lang: str) -> None:
    out.print(f"[bold]{say('plan', lang, minutes=minutes, n=concepts, s='s' * (concepts != 1), task=task)}[/]")


def part(kind: str, lang: str) -> None:
    out.rule(f"[bold]{say('part_' + kind, lang)}[/]")


def _lines(p: dict, lang: str) -> tuple[list[str], list[str]]:
    """(went well, drill next) of one part."""
    from drill.views.whiteboard_view import clock

    well: list[str] = []
    todo: list[str] = []
    if p["part"] == "pitch" and p["question"]:
        enough = p["passed"]
        text = say("pitch_good" if enough else "pitch_weak", lang, question=p["question"], covered=p["covered"], points=p["key_points"])
        (well if enough else todo).append(text)
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
            well.append(say("wb_passed", lang, task=p["task"], clock=clock(p["seconds"]), hints=hints, hs="s" * (hints != 1)))
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
