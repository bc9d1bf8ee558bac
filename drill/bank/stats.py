"""Counts of a bank by topic, level and type (``drill bank stats``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from drill.bank.load import Bank
from drill.bank.schema import LEVELS, TYPES


@dataclass
class Coverage:
    cells: Counter  # (topic, level, type) -> count
    topics: list[str]

    def count(self, topic: str | None = None, level: str | None = None, type: str | None = None) -> int:
        return sum(
            n
            for (t, lv, ty), n in self.cells.items()
            if (topic is None or t == topic) and (level is None or lv == level) and (type is None or ty == type)
        )

    def to_markdown(self) -> str:
        """One table: a row per topic, a column per level and per type, and totals."""
        header = ["topic", *LEVELS, *TYPES, "total"]
        rows = [
            [t, *(str(self.count(t, level=lv)) for lv in LEVELS), *(str(self.count(t, type=ty)) for ty in TYPES), str(self.count(t))]
            for t in self.topics
        ]
        rows.append(["**total**", *(str(self.count(level=lv)) for lv in LEVELS), *(str(self.count(type=ty)) for ty in TYPES), str(self.count())])
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        objective = self.count() - self.count(type="open")
        share = objective / self.count() if self.count() else 0.0
        return "\n".join(lines) + f"\n\nObjective (choice, numeric, shape): {objective} of {self.count()} ({share:.0%}).\n"


def coverage(bank: Bank) -> Coverage:
    cells = Counter((q.topic, q.level, q.type) for q in bank.questions.values())
    return Coverage(cells, bank.topics)
