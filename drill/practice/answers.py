"""Grading of typed answers: objective types automatically, open ones by key-point keywords.

Reading is forgiving on purpose (case, width, spacing, bracket style, arithmetic,
units) because a candidate under a timer should lose points for wrong answers, never
for formatting. An answer that cannot be read at all is *unreadable*, not wrong:
in a terminal the user is asked again.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

from drill.practice import quantities
from drill.bank.schema import ChoiceQuestion, NumericQuestion, ShapeQuestion

LETTERS = "ABCDEFGH"
REL_EPSILON = 1e-9  # tolerance 0 still forgives float round-off in "0.1 + 0.2"-style answers

_CHOICE_SEPARATORS = re.compile(r"[\s,;/+&、和与及.()]+|\band\b", re.IGNORECASE)
_TORCH_SIZE = re.compile(r"^\s*(?:torch\.)?size\s*\((.*)\)\s*$", re.IGNORECASE | re.S)
_BRACKETS = str.maketrans({"【": "[", "】": "]", "〔": "(", "〕": ")", "「": "[", "」": "]", "、": ",", "−": "-"})
_OPERATOR_SPACES = re.compile(r"\s*([*/+\-])\s*")
_DIGIT_X = re.compile(r"(?<=\d)\s*x\s*(?=\d)", re.IGNORECASE)
_BINDING = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z_]*)\s*=\s*(\d[\d,]*)(?![\d.])")  # "B=2", "d_model = 512" in a prompt
_DIM = re.compile(r"[a-z0-9_*/+\-.']+")  # 21, t, d_k, b*h, t+1, d_model/h
_GAP = "\x00"  # a folded space: ignored inside a keyword, a word boundary around one
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9 .'-]*")  # a keyword written as a word or a name, not a formula
_ACRONYM = re.compile(r"[A-Z][A-Z0-9-]*")  # IO, WRAP, GQA, FP8 as written in a keyword list
_DIM_ALIASES = {"batch": "b", "bsz": "b", "heads": "h", "n_heads": "h", "num_heads": "h"}


class Rating(IntEnum):
    """FSRS ratings; the values are what ``attempts.rating`` stores."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4

    @property
    def label(self) -> str:
        return self.name.capitalize()


@dataclass(frozen=True)
class Verdict:
    """How an answer was judged; ``unreadable`` and ``note`` are i18n keys with their values."""

    correct: bool | None  # None for open questions
    unreadable: str | None = None  # why the answer could not be read (then ``correct`` is False)
    note: str | None = None  # how a number was read, e.g. 4.29 GB in GiB
    values: dict = field(default_factory=dict)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_BRACKETS)


def parse_choice(text: str, n_choices: int) -> frozenset[int] | None:
    """Letters such as ``"b"``, ``"AC"``, ``"a, c"``, ``"Ａ"``, ``"A、C"`` or ``"A和C"`` as choice indices; None if unreadable."""
    letters = _CHOICE_SEPARATORS.sub("", _fold(text)).upper()
    if not letters or any(ch not in LETTERS[:n_choices] for ch in letters):
        return None
    return frozenset(LETTERS.index(ch) for ch in letters)


def normalise_shape(text: str) -> tuple[str, ...] | None:
    """``(b,h,t,t)``, ``[B, H, T, T]``, ``B H T T``, ``B×H×T×T``, ``（2，8，1，21）``, ``torch.Size([2, 8])``: lower-case dims."""
    text = _fold(text).strip()
    inner = _TORCH_SIZE.match(text)
    body = re.sub(r"[()\[\]]", " ", inner.group(1) if inner else text).lower()
    body = _OPERATOR_SPACES.sub(r"\1", body).strip()
    if "," in body:
        parts = body.split(",")
    elif "×" in body:
        parts = body.split("×")
    elif re.search(r"\sx\s", body) or _DIGIT_X.search(body):
        parts = re.split(r"\s+x\s+|(?<=\d)\s*x\s*(?=\d)", body)
    else:
        parts = body.split()
    dims = [re.sub(r"\s+", "", d) for d in parts]
    dims = dims[:-1] if len(dims) > 1 and not dims[-1] else dims  # "(b,)" is a 1-d shape
    if not dims or not all(_DIM.fullmatch(d) for d in dims):
        return None
    return tuple(_DIM_ALIASES.get(d, d) for d in dims)


def bindings(q) -> dict[str, float]:
    """The sizes the prompt gives (``B=2, T=10, d_model = 512``), by lower-case name, for integer answers to symbolic shapes."""
    found: dict[str, float] = {}
    for text in (q.prompt.en, q.prompt.zh):
        for name, value in _BINDING.findall(text.replace("$", "")):
            found.setdefault(name.lower(), float(value.replace(",", "")))
    return found


def _dim_value(dim: str, sizes: dict[str, float]) -> float | None:
    """A dimension as a number: ``8``, or ``t+1``, ``b*h``, ``d_model/h`` with the prompt's sizes."""
    unknown = [name for name in re.findall(r"[a-z_][a-z0-9_]*", dim) if name not in sizes]
    if unknown:
        return None
    quantity = quantities.read(re.sub(r"[a-z_][a-z0-9_]*", lambda m: repr(sizes[m.group(0)]), dim))
    return None if quantity is None or quantity.unit else quantity.value


def _same_shape(given: tuple[str, ...], expected: tuple[str, ...], sizes: dict[str, float]) -> bool:
    if len(given) != len(expected):
        return False
    for g, e in zip(given, expected):
        if g.replace("_", "") == e.replace("_", ""):  # T_q or Tq
            continue
        gv, ev = _dim_value(g, sizes), _dim_value(e, sizes)
        if gv is None or ev is None or gv != ev:
            return False
    return True


def _within(value: float, q: NumericQuestion) -> bool:
    return abs(value - q.value) <= max(q.tolerance, REL_EPSILON * max(1.0, abs(q.value)))


def _judge_number(q: NumericQuestion, text: str) -> Verdict:
    quantity = quantities.read(text)
    if quantity is None:
        return Verdict(False, "unreadable_number", values={"text": text})
    readings = quantities.in_unit(quantity, q.unit)
    hit = next((r for r in readings if _within(r.value, q)), None)
    shown = hit or readings[0]
    if not shown.converted:
        return Verdict(hit is not None)
    values = {"typed": text.strip(), "value": f"{shown.value:.4g} {q.unit}".strip()}
    return Verdict(hit is not None, note="note_gb_gib" if shown.decimal_vs_binary else "note_read_as", values=values)


def judge(q, text: str) -> Verdict:
    """The verdict on ``text`` for ``q``: right, wrong, or unreadable (an empty answer is wrong: the user gave up)."""
    if not q.objective:
        return Verdict(None)
    if not text.strip():
        return Verdict(False)
    if isinstance(q, ChoiceQuestion):
        chosen = parse_choice(text, len(q.choices))
        if chosen is None:
            return Verdict(False, "unreadable_choice", values={"text": text, "letters": f"A–{LETTERS[len(q.choices) - 1]}"})
        return Verdict(chosen == q.correct_set)
    if isinstance(q, NumericQuestion):
        return _judge_number(q, text)
    if isinstance(q, ShapeQuestion):
        given = normalise_shape(text)
        if given is None:
            return Verdict(False, "unreadable_shape", values={"text": text})
        expected = normalise_shape(q.shape)
        return Verdict(expected is not None and _same_shape(given, expected, bindings(q)))
    return Verdict(None)


_FORMULA_NOISE = str.maketrans({c: None for c in "^·*×∘"} | {c: _GAP for c in " \t\r\n"} | {"−": "-", "–": "-"})


def _fold_formula(text: str) -> str:
    """Case, width, superscripts and formula spacing folded away: ``h · T²`` matches ``h*T^2``.

    Spaces become ``_GAP`` rather than vanishing, so a keyword can still demand a word boundary.
    """
    return unicodedata.normalize("NFKC", text).lower().translate(_FORMULA_NOISE)


@lru_cache(maxsize=8192)
def keyword_pattern(keyword: str) -> re.Pattern:
    """Where ``keyword`` counts in folded text: spacing ignored, and at word boundaries where it is a word.

    A keyword written as a word (``norm``, ``model collapse``) must start a word (``norm`` is not in
    *enormous*) but may be a stem (``saturat`` ticks *saturation*). An acronym (``IO``, ``WRAP``,
    ``GQA``) or a name ending in a digit (``phi-1``, ``FP8``) must also end one, a plural ``s``
    allowed: ``IO`` is not in *ratio*, ``WRAP`` not in *wrapper*, ``phi-1`` not in *phi-15*.
    Formulas (``W_Q``, ``h*T^2``, ``d²``) match anywhere, as they are typed inside longer ones.
    """
    folded = _fold_formula(keyword).strip(_GAP)
    body = f"{_GAP}*".join(map(re.escape, folded))
    word = _WORD.fullmatch(keyword.strip()) is not None
    start = "(?<![a-z0-9])" if word else ""
    whole = word and (_ACRONYM.fullmatch(keyword.strip()) is not None or folded[-1:].isdigit())
    return re.compile(start + body + ("(?:s|es)?(?![a-z0-9])" if whole else ""))


def matched_key_points(q, text: str) -> list[bool]:
    """For each key point, whether any of its keywords (either language) occurs in ``text`` (see :func:`keyword_pattern`)."""
    folded = _fold_formula(text)
    return [any(keyword_pattern(kw).search(folded) for kw in kp.keywords.all()) for kp in q.key_points]


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
