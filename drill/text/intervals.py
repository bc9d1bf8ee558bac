"""A review interval as Anki prints it on its rating buttons, in English or Chinese."""

from __future__ import annotations

from datetime import timedelta

_UNITS = (  # (seconds in the unit, en suffix, zh suffix), largest first
    (365 * 86400, "y", "年"),
    (30 * 86400, "mo", "个月"),
    (86400, "d", "天"),
    (3600, "h", "小时"),
    (60, "m", "分钟"),
)


def interval_text(delta: timedelta, lang: str = "en") -> str:
    """Anki-style: ``<1m``, ``10m``, ``4d``, ``1.5mo``, ``2y`` (``10分钟``, ``4天`` in Chinese)."""
    seconds = delta.total_seconds()
    for size, en, zh in _UNITS:
        if seconds >= size:
            value = seconds / size
            number = f"{value:.1f}".rstrip("0").rstrip(".") if size >= 30 * 86400 else str(round(value))
            return f"{number}{zh if lang == 'zh' else en}"
    return "<1分钟" if lang == "zh" else "<1m"
