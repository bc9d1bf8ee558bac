"""Rendering of history import/export results and written exports (plain text: paths may contain ``[``)."""

from __future__ import annotations

from pathlib import Path

from drill.history.transfer import Counts
from drill.text.messages import Msg, translated

def counted(table: str, n: int) -> Msg:
    return {"sessions": Msg("{n} sessions", n=n), "attempts": Msg("{n} attempts", n=n), "grade_runs": Msg("{n} grade runs", n=n),
            "review_state": Msg("{n} review cards", n=n), "task_reviews": Msg("{n} task reviews", n=n),
            "config": Msg("{n} config keys", n=n)}[table]  # fmt: skip


def print_exported(path: Path, counts: dict[str, int], lang: str) -> None:
    from drill.views.console import out

    summary = Msg.seq([counted(t, n) for t, n in counts.items()], ", ")
    out.print(translated(Msg("wrote {path}: {summary}", path=str(path), summary=summary), lang), markup=False)


def print_imported(path: Path, counts: Counts, lang: str) -> None:
    from drill.views.console import out

    added = [counted(t, n) for t, n in counts.added.items() if n]
    what = Msg.seq(added, ", ") if added else Msg("nothing new")
    present = sum(counts.present.values())
    line = (Msg("imported {path}: {added} ({present} already here, skipped)", path=str(path), added=what, present=present) if present
            else Msg("imported {path}: {added}", path=str(path), added=what))  # fmt: skip
    out.print(translated(line, lang), markup=False)
    for key, (local, theirs) in sorted(counts.config_kept.items()):
        kept = Msg("kept local config {key}={local} (the file has {theirs}; change it with: drill config set {key} {theirs})",
                   key=key, local=local, theirs=theirs)  # fmt: skip
        out.print(translated(kept, lang), markup=False)


def print_written(path: Path, count: int, lang: str) -> None:
    """One plain line: `drill export anki` is on a 1 s budget that rich.console's import would eat into."""
    print(translated(Msg("wrote {count} questions to {path}", count=count, path=str(path)), lang))
