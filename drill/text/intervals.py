"""A review interval as Anki prints it on its rating buttons, as a message (drill.text.messages)."""

from __future__ import annotations

from datetime import timedelta

from drill.text.messages import Msg, translated

_UNITS = (  # (seconds in the unit, the interval in it), largest first
    (365 * 86400, lambda n: Msg("{n}y", n=n)),
    (30 * 86400, lambda n: Msg("{n}mo", n=n)),
    (86400, lambda n: Msg("{n}d", n=n)),
    (3600, lambda n: Msg("{n}h", n=n)),
    (60, lambda n: Msg("{n}m", n=n)),
)


def interval_text(delta: timedelta, lang: str = "en") -> str:
    """Anki-style: ``<1m``, ``10m``, ``4d``, ``1.5mo``, ``2y`` (``10 分钟``, ``4 天`` in Chinese)."""
    seconds = delta.total_seconds()
    for size, unit in _UNITS:
        if seconds >= size:
            value = seconds / size
            number = f"{value:.1f}".rstrip("0").rstrip(".") if size >= 30 * 86400 else str(round(value))
            return translated(unit(number), lang)
    return translated(Msg("<1m"), lang)
