"""Rendering of history import/export results and written exports (plain text: paths may contain ``[``)."""

from __future__ import annotations

from pathlib import Path

from drill.history.transfer import Counts

LABELS = {"sessions": "sessions", "attempts": "attempts", "grade_runs": "grade runs", "review_state": "review cards",
          "task_reviews": "task reviews", "config": "config keys"}  # fmt: skip


def print_exported(path: Path, counts: dict[str, int]) -> None:
    from drill.views.console import out

    summary = ", ".join(f"{n} {LABELS[t]}" for t, n in counts.items())
    out.print(f"wrote {path}: {summary}", markup=False)


def print_imported(path: Path, counts: Counts) -> None:
    from drill.views.console import out

    added = ", ".join(f"{n} {LABELS[t]}" for t, n in counts.added.items() if n) or "nothing new"
    present = sum(counts.present.values())
    out.print(f"imported {path}: {added}" + (f" ({present} already here, skipped)" if present else ""), markup=False)
    for key, (local, theirs) in sorted(counts.config_kept.items()):
        out.print(f"kept local config {key}={local} (the file has {theirs}; change it with: drill config set {key} {theirs})", markup=False)


def print_written(path: Path, count: int) -> None:
    """One plain line: `drill export anki` is on a 1 s budget that rich.console's import would eat into."""
    print(f"wrote {count} questions to {path}")
