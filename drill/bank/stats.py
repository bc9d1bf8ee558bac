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

    def rows(self) -> list[tuple[str, list[int]]]:
        """A row per topic, then the totals: counts per level, per type, and overall."""
        def row(topic: str | None) -> list[int]:
            return [*(self.count(topic, level=lv) for lv in LEVELS), *(self.count(topic, type=ty) for ty in TYPES), self.count(topic)]

        return [*((t, row(t)) for t in self.topics), ("total", row(None))]

    def to_markdown(self) -> str:
        """One table: a row per topic, a column per level and per type, and totals."""
        header = ["topic", *LEVELS, *TYPES, "total"]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for label, counts in self.rows():
            label = "**total**" if label == "total" else label
            lines.append("| " + " | ".join([label, *map(str, counts)]) + " |")
        objective = self.count() - self.count(type="open")
        share = objective / self.count() if self.count() else 0.0
        return "\n".join(lines) + f"\n\nObjective (choice, numeric, shape): {objective} of {self.count()} ({share:.0%}).\n"


def coverage(bank: Bank) -> Coverage:
    cells = Counter((q.topic, q.level, q.type) for q in bank.questions.values())
    return Coverage(cells, bank.topics)
