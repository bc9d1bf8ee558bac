"""Grading of typed answers: objective types automatically, open ones by key-point keywords.

Parsing is forgiving on purpose (case, spacing, bracket style, thousands separators,
trailing units) because a candidate under a timer should lose points for wrong
answers, never for formatting.
"""

from __future__ import annotations

import re
import unicodedata
from enum import IntEnum

from drill.bank.schema import ChoiceQuestion, NumericQuestion, ShapeQuestion

LETTERS = "ABCDEFGH"
REL_EPSILON = 1e-9  # tolerance 0 still forgives float round-off in "0.1 + 0.2"-style answers

_NUMBER = re.compile(
    r"""^\s*(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?)\s*(?P<unit>(?![\d.^*/×]|,\s*\d)\S.*)?$"""
)  # a unit never starts like more arithmetic: "4/3", "2^30" or "1,5" are not the number 4, 2 or 1
_POWER = re.compile(
    r"""^\s*(?:(?P<mantissa>[-+]?\d+(?:\.\d+)?)\s*[×x*·]\s*)?(?P<base>\d+(?:\.\d+)?)\s*(?:\^|\*\*)\s*(?P<exp>[-+]?\d+)\s*(?P<unit>[^\d.^*/×·]\S*.*)?$"""
)  # "2^29", "2**29", "4 × 10^9": interview answers are often powers
_CHOICE_SEPARATORS = re.compile(r"[\s,;/+&]+")
_TORCH_SIZE = re.compile(r"^\s*(?:torch\.)?size\s*\((.*)\)\s*$", re.IGNORECASE)
_SHAPE_SPLIT = re.compile(r",|×|\s+x\s+", re.IGNORECASE)


class Rating(IntEnum):
    """FSRS ratings; the values are what ``attempts.rating`` stores."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4

    @property
    def label(self) -> str:
        return self.name.capitalize()


def parse_choice(text: str, n_choices: int) -> frozenset[int] | None:
    """Letters such as ``"b"``, ``"AC"`` or ``"a, c"`` as choice indices; None if unreadable."""
    letters = _CHOICE_SEPARATORS.sub("", text).upper()
    if not letters or any(ch not in LETTERS[:n_choices] for ch in letters):
        return None
    return frozenset(LETTERS.index(ch) for ch in letters)


def parse_number(text: str) -> float | None:
    """``"4"``, ``"4.0"``, ``"4 GiB"``, ``"4e9"``, ``"1,024"``, ``"2^29"``, ``"4 × 10^9"``; the unit is ignored."""
    power = _POWER.match(text)
    if power:
        try:
            return float(power.group("mantissa") or 1) * float(power.group("base")) ** int(power.group("exp"))
        except OverflowError:
            return None
    match = _NUMBER.match(text)
    if not match:
        return None
    try:
        return float(match.group("num").replace(",", ""))
    except ValueError:
        return None


def normalise_shape(text: str) -> tuple[str, ...] | None:
    """``"(b,h,t,t)"``, ``"[B, H, T, T]"`` and ``torch.Size([b, h, t, t])`` all give ``('b','h','t','t')``."""
    inner = _TORCH_SIZE.match(text)
    body = inner.group(1) if inner else text
    body = re.sub(r"[()\[\]]", "", body).lower()
    dims = tuple(re.sub(r"\s+", "", d) for d in _SHAPE_SPLIT.split(body))
    dims = dims[:-1] if len(dims) > 1 and not dims[-1] else dims  # "(b,)" is a 1-d shape
    if not dims or any(not d for d in dims):
        return None
    return dims


def is_correct(q, text: str) -> bool | None:
    """Whether ``text`` answers objective question ``q``; None for open questions."""
    if isinstance(q, ChoiceQuestion):
        return parse_choice(text, len(q.choices)) == q.correct_set
    if isinstance(q, NumericQuestion):
        x = parse_number(text)
        return x is not None and abs(x - q.value) <= max(q.tolerance, REL_EPSILON * max(1.0, abs(q.value)))
    if isinstance(q, ShapeQuestion):
        given = normalise_shape(text)
        return given is not None and given == normalise_shape(q.shape)
    return None


_FORMULA_NOISE = str.maketrans({c: None for c in " \t\r\n^·*×∘"} | {"−": "-", "–": "-"})


def _fold(text: str) -> str:
    """Case, width, superscripts and formula spacing folded away: ``h · T²`` matches ``h*T^2``."""
    return unicodedata.normalize("NFKC", text).lower().translate(_FORMULA_NOISE)


def matched_key_points(q, text: str) -> list[bool]:
    """For each key point, whether any of its keywords (either language) occurs in ``text``."""
    folded = _fold(text)
    return [any(_fold(kw) in folded for kw in kp.keywords.all()) for kp in q.key_points]


def objective_rating(correct: bool, over_time: bool, cut_off: bool) -> Rating:
    """Wrong or cut off by a strict deadline → Again; right but over a soft deadline → Hard; else Good."""
    if not correct or cut_off:
        return Rating.AGAIN
    return Rating.HARD if over_time else Rating.GOOD


def parse_rating(text: str) -> Rating | None:
    """``"1"``-``"4"`` or a rating name (``"good"``, ``"g"``)."""
    word = text.strip().lower()
    if word in ("1", "2", "3", "4"):
        return Rating(int(word))
    for rating in Rating:
        if word and rating.name.lower().startswith(word):
            return rating
    return None
