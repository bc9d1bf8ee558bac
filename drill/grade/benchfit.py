"""``--bench`` results as plain data, and how memory grows with T. Torch-free: the parent renders it.

The growth is the slope of log(peak bytes) against log(T) by least squares: about 2 when the
kernel holds the T x T score matrix, about 1 when it works tile by tile (flash).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    seconds: float  # median time of one call
    peak_bytes: int  # see BenchResult.memory_measure


@dataclass(frozen=True)
class Row:
    t: int
    contenders: dict[str, Measure]  # yours, reference, torch


@dataclass(frozen=True)
class BenchResult:
    task: str
    device: str
    shape: str
    memory_measure: str
    rows: list[Row]

    @classmethod
    def from_wire(cls, data: dict) -> BenchResult:
        rows = [Row(r["t"], {n: Measure(**m) for n, m in r["contenders"].items()}) for r in data["rows"]]
        return cls(data["task"], data["device"], data["shape"], data["memory_measure"], rows)

    def memory_slope(self, name: str) -> float | None:
        points = [(r.t, r.contenders[name].peak_bytes) for r in self.rows if r.contenders[name].peak_bytes > 0]
        return loglog_slope(*zip(*points)) if len(points) >= 2 else None

    def growth(self, name: str) -> str:
        slope = self.memory_slope(name)
        return "-" if slope is None else growth_label(slope)

    def to_json(self) -> dict:
        return {
            "task": self.task, "device": self.device, "shape": self.shape, "memory_measure": self.memory_measure,
            "rows": [{"T": r.t, **{n: {"seconds": m.seconds, "peak_bytes": m.peak_bytes} for n, m in r.contenders.items()},
                      "ratio_vs_reference": r.contenders["yours"].seconds / r.contenders["reference"].seconds,
                      "ratio_vs_torch": r.contenders["yours"].seconds / r.contenders["torch"].seconds} for r in self.rows],
            "memory_slope": {n: self.memory_slope(n) for n in ("yours", "reference", "torch")},
        }  # fmt: skip


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log(y) on log(x): the exponent k of y ~ x^k."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    if den == 0:
        raise ValueError("need at least two different x values")
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den


def growth_label(slope: float) -> str:
    """The nearest of constant, ~T, ~T^2 (and beyond) for a fitted exponent."""
    k = round(slope)
    return "constant" if k <= 0 else "~T" if k == 1 else f"~T^{k}"
