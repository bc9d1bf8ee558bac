"""Rendering of ``drill grade --trace`` and of the grade's pictures (a leak matrix, a weights heat map).

Everything is Rich markup with plain symbols underneath: the Console drops the colour when stdout
is not a terminal or NO_COLOR is set, and the symbols alone still tell the cells apart. Every line
fits 80 columns (the pictures are drawn for T <= 12).
"""

from __future__ import annotations

from rich.markup import escape

from drill.text.i18n import text
from drill.text.messages import Msg, translated

CODE_WIDTH = 32
SHAPE_WIDTH = 18
CELLS = {  # (allowed, let through) -> (symbol, style)
    (True, True): ("●", "green"),
    (False, False): ("·", "dim"),
    (False, True): ("✗", "bold red"),
    (True, False): ("○", "yellow"),
}
LEGEND = Msg("● allowed, used  · masked, blocked  ✗ LEAK: masked, let through  ○ allowed, blocked")
SHADES = " ░▒▓█"
TEXT = {
    "trace": Msg("trace: your lines, the shapes they make, the reference step they match"),
    "values": Msg("trace: your lines, the values they bind, the reference step they match"),
    "wrong": Msg("where it goes wrong"),
    "where": Msg("line {n}: {message}"),
    "query": Msg("rows: queries, columns: keys"),
    "expected": Msg("expected"),
    "theirs": Msg("yours"),
    "shades": Msg("shades: 0 ' ' ░ ▒ ▓ █ 1"),
    "red": Msg("red ▪: yours differs by more than 0.001"),
    "none": Msg("no trace for this task yet (it declares no reference steps)"),
}


def t(key: str, lang: str, **values: object) -> str:
    return text(TEXT[key], lang, **values)


def where(divergence: dict, lang: str) -> str:
    """"line 7: …" (第 7 行：…) for a diagnosis panel or a compact report."""
    return t("where", lang, n=divergence["line"], message=message(divergence, lang))


def message(divergence: dict, lang: str) -> str:
    """What went wrong at the divergence, in ``lang``."""
    return translated(divergence["message"], lang)


def trace_lines(rows: list[dict], lang: str) -> list[str]:
    """One line per run of records on the same source line: number, code, shapes, the match."""
    out = [f"[bold]{t('values' if rows and 'value' in rows[0] else 'trace', lang)}[/]"]  # a value trace (bpe) has values
    if not rows:
        return [*out, f"  [dim]{t('none', lang)}[/]"]
    groups: list[list[dict]] = []
    for row in rows:
        if groups and groups[-1][0]["line"] == row["line"]:
            groups[-1].append(row)
        else:
            groups.append([row])
    for group in groups:
        shapes = []
        for row in group:
            if row["status"] != "aux" and row["shape"] not in shapes:
                shapes.append(row["shape"])
        names = [translated(r["match"], lang) for r in group if r["match"]]
        if any(r["status"] == "diverges" for r in group):
            mark = f"[bold red]✗ {t('wrong', lang)}[/]"
        elif names:
            mark = f"[green]✓ {escape(names[-1])}[/]"
        elif any(r["status"] == "feeds" for r in group):
            mark = "[green]✓[/] [dim]→[/]"
        elif any(r["status"] == "none" for r in group):
            mark = "[red]✗[/]"
        else:
            mark = "[dim]·[/]"
        code = group[0]["code"]
        code = code if len(code) <= CODE_WIDTH else code[: CODE_WIDTH - 1] + "…"
        shown = " ".join(str(s).replace(" ", "") for s in shapes) or group[-1]["dtype"]
        if len(shown) > SHAPE_WIDTH:
            shown = str(shapes[-1]).replace(" ", "")
        out.append(f"{group[0]['line']:>4}  {escape(code):<{CODE_WIDTH}}  {escape(shown):<{SHAPE_WIDTH}} {mark}")
    return out


def picture_lines(picture: dict, lang: str) -> list[str]:
    if picture["kind"] == "leak":
        return leak_lines(picture, lang)
    return heat_lines(picture, lang)


def title(picture: dict, lang: str) -> str:
    return translated(picture["title"], lang)


def leak_lines(picture: dict, lang: str) -> list[str]:
    """The T x T (query, key) matrix: what the contract allows against what the code lets through."""
    allowed, through = picture["allowed"], picture["through"]
    keys = len(allowed[0]) if allowed else 0
    out = [f"[bold]{escape(title(picture, lang))}[/]  [dim]{t('query', lang)}[/]",
           "      " + " ".join(f"{j:>2}" for j in range(keys))]  # fmt: skip
    for i, (row_a, row_t) in enumerate(zip(allowed, through)):
        cells = []
        for a, g in zip(row_a, row_t):
            symbol, style = CELLS[(bool(a), bool(g))]
            cells.append(f"[{style}]{symbol:>2}[/]")
        out.append(f"  q{i:<2} " + " ".join(cells))
    out.append(f"[dim]{translated(LEGEND, lang)}[/]")
    return out


def heat_lines(picture: dict, lang: str) -> list[str]:
    """Expected and returned attention weights side by side, one shade per cell."""
    expected, theirs = picture["expected"], picture["theirs"]
    width = len(expected[0]) if expected else 0
    out = [f"[bold]{escape(title(picture, lang))}[/]",
           f"  {t('expected', lang):<{width * 2 + 4}}  {t('theirs', lang)}"]  # fmt: skip
    for i, (row_e, row_t) in enumerate(zip(expected, theirs)):
        left = "".join(shade(x) * 2 for x in row_e)
        right = "".join(
            (f"[bold red]{'▪▪' if shade(y) in (' ', shade(x)) else shade(y) * 2}[/]" if abs(y - x) > 1e-3 else shade(y) * 2)
            for x, y in zip(row_e, row_t)
        )
        out.append(f"  q{i:<2}{left}  │  {right}")
    out.append(f"[dim]{t('shades', lang)}; {t('red', lang)}[/]")
    return out


def shade(x: float) -> str:
    if x != x or x < 0:  # NaN (sent as -1) or a negative weight: never a valid probability
        return "?"
    return SHADES[min(len(SHADES) - 1, int(round(min(x, 1.0) * (len(SHADES) - 1))))]
