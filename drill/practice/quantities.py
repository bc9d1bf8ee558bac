"""Numbers as people type them, and their value in the unit a question asks for.

``29/38``, ``1 - 90/380``, ``2^29``, ``4 × 10^9``, ``sqrt(64)``, ``ln 2``, ``e^-1`` are
arithmetic, evaluated by simpleeval limited to numbers, + - * / and powers, and a few
functions (never ``eval``). After the number may come a unit or a magnitude:
``4 GiB``, ``4.29 GB``, ``7B``, ``6.7 billion``, ``1.2k``, ``64%``, ``7 ms``. Full-width
forms from a Chinese input method (``２９／３８``, ``６４％``) are folded first.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_FOLD = str.maketrans({"−": "-", "–": "-", "÷": "/", "·": "*", "⋅": "*", "∙": "*", "×": "*", "√": " sqrt ", "^": "**", "{": "(", "}": ")", "[": "(", "]": ")"})
_APPROX = re.compile(r"^\s*(?:~|≈|about|approx\.?|approximately|around|roughly|约|大约|大概)\s*", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_TIMES_X = re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])")  # "4 x 10^9"; a trailing "4x" is a unit
_CALL = re.compile(r"\b(sqrt|ln|log|exp)\s*(?!\s*\()([0-9.]+(?:[eE][-+]?\d+)?)")  # "ln 2", "sqrt 64" → ln(2), sqrt(64)
_UNIT_START = re.compile(r"(?<=[\d\s).\-])(?=[A-Za-z%µμ°\u4e00-\u9fff]|[×x*]\s*[A-Za-z])")  # "0.447 × lr": times a symbol
_LOOSE_NUMBER = re.compile(r"(?<![\w.^])\d")  # a second number after the unit, not a digit inside one (fp16)
_DOUBLE_SIGN = re.compile(r"[-+]\s*[-+]")
_TIMES_UNIT = re.compile(r"(?<=[\d)])\s*(?:[xX×]|times|倍)$")  # "57×", "57x": a ratio


@dataclass(frozen=True)
class Quantity:
    """A typed number and whatever followed it (``"GiB"``, ``"%"``, ``"B"``, or ``""``)."""

    value: float
    unit: str = ""


@dataclass(frozen=True)
class Unit:
    scale: float  # in the family's base unit: GiB → 2**30 bytes, ms → 0.001 s, "billion parameters" → 1e9
    family: str  # bytes, flop, time, percent, magnitude (a bare 7B or 1.2k), or other
    name: str
    binary: bool | None = None  # KiB, MiB, GiB: powers of two; KB, MB, GB: of ten; None without a prefix


_MAGNITUDES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9, "g": 1e9,
               "t": 1e12, "trillion": 1e12, "万": 1e4, "亿": 1e8}  # fmt: skip
_SI = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}
_BINARY = {"ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40, "pi": 2.0**50}
_TIME = {"ns": 1e-9, "µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0,
         "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hour": 3600.0, "hours": 3600.0, "day": 86400.0, "days": 86400.0}  # fmt: skip
_PERCENT = {"%", "percent", "pct"}


def read(text: str) -> Quantity | None:
    """The number at the start of ``text`` and the unit after it; None when no number can be read."""
    text = _APPROX.sub("", unicodedata.normalize("NFKC", text)).strip().rstrip("。.").strip()
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
    if not text or "," in text:  # "1,5": a decimal comma or two numbers, not something to guess
        return None
    times = _TIMES_UNIT.search(text)
    if times:
        value = _evaluate(text[: times.start()])
        return None if value is None else Quantity(value, "×")
    value = _evaluate(text)
    if value is not None:
        return Quantity(value)
    for split in reversed([m.start() for m in _UNIT_START.finditer(text)]):
        value = _evaluate(text[:split].strip().rstrip("-").strip())
        if value is not None:
            unit_text = text[split:].strip()
            return None if _LOOSE_NUMBER.search(unit_text) else Quantity(value, unit_text)  # "4 or 5" is no answer
    return None


def _evaluate(expr: str) -> float | None:
    if not expr or _DOUBLE_SIGN.search(expr) or "'" in expr or '"' in expr:  # no strings: "'a' * 10000000000"
        return None
    python = _CALL.sub(r"\1(\2)", _TIMES_X.sub("*", expr.translate(_FOLD)))
    from simpleeval import InvalidExpression

    try:
        value = _evaluator().eval(python)
    except (InvalidExpression, SyntaxError, ArithmeticError, ValueError, TypeError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


@lru_cache(maxsize=1)
def _evaluator():
    import ast

    from simpleeval import SimpleEval

    def power(base: float, exp: float) -> float:
        return math.pow(base, exp)  # floats: 2^1000000 overflows at once instead of building a huge int

    operators = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
                 ast.Pow: power, ast.USub: lambda a: -a, ast.UAdd: lambda a: +a}  # fmt: skip
    functions = {"sqrt": math.sqrt, "ln": math.log, "log": math.log, "exp": math.exp, "log2": math.log2, "log10": math.log10}
    evaluator = SimpleEval(operators=operators, functions=functions, names={"e": math.e, "pi": math.pi, "π": math.pi})
    # Numbers, names, arithmetic and calls only: "4 or 5", "4 if x else 5", "(4)[0]" are not numbers.
    evaluator.nodes = {kind: handler for kind, handler in evaluator.nodes.items() if kind in (ast.Expr, ast.Constant, ast.Name, ast.UnaryOp, ast.BinOp, ast.Call)}
    return evaluator


def unit(text: str, bytes_context: bool = False) -> Unit:
    """``"GiB"``, ``"GFLOP"``, ``"ms"``, ``"%"``, ``"billion parameters"``, ``"7B"``'s ``"B"`` (bytes where sizes are asked)."""
    name = text.strip()
    low = name.lower()
    if not low:
        return Unit(1.0, "other", "")
    if low in _PERCENT:
        return Unit(0.01, "percent", name)
    if low in ("b", "byte", "bytes") and (bytes_context or low != "b"):
        return Unit(1.0, "bytes", name)
    sized = re.fullmatch(r"([kmgtp])(i?)b(?:ytes?)?", low)
    if sized:
        prefix = sized.group(1) + sized.group(2)
        return Unit(_BINARY[prefix] if sized.group(2) else _SI[prefix], "bytes", name, binary=bool(sized.group(2)))
    flop = re.fullmatch(r"([kmgtp]?)flops?", low)
    if flop:
        return Unit(_SI[flop.group(1)], "flop", name)
    if low in _TIME:
        return Unit(_TIME[low], "time", name)
    multiplier = re.fullmatch(r"[×x*]\s*(.+)", name)  # "× 1e-5": the answer is counted in units of 1e-5
    if multiplier and _evaluate(multiplier.group(1)) is not None:
        return Unit(_evaluate(multiplier.group(1)), "magnitude", name)
    first, _, rest = low.partition(" ")
    if first in _MAGNITUDES:
        base = unit(rest, bytes_context)  # "billion parameters": the word after the magnitude only names the count
        family = base.family if base.family in ("bytes", "flop", "time") else "magnitude"
        return Unit(_MAGNITUDES[first] * base.scale, family, name, base.binary)
    return Unit(1.0, "other", name)


@dataclass(frozen=True)
class Reading:
    """A typed quantity in the unit of the reference, and how it got there."""

    value: float
    converted: bool = False  # the typed unit differed from the reference's
    decimal_vs_binary: bool = False  # GB against GiB (or back): 7% apart at G, the tolerance decides


def in_unit(q: Quantity, reference_unit: str) -> list[Reading]:
    """The readings of ``q`` in ``reference_unit``, the likeliest first.

    A bare number is read in the reference's unit, and then in its base unit
    (``4294967296`` for a question in GiB); ``64%`` is 0.64 unless the unit is ``%``.
    """
    ref = unit(reference_unit)
    if not q.unit:
        readings = [Reading(q.value)]
        if ref.scale != 1.0:
            readings.append(Reading(q.value / ref.scale, converted=True))
        return readings
    typed = unit(q.unit, bytes_context=ref.family == "bytes")
    if typed.name.lower() == ref.name.lower() or typed.family == "other":
        return [Reading(q.value)]  # an unknown unit ("4 GiB/s", "8 slots") is not held against the number
    if typed.family == "magnitude" and ref.family in ("bytes", "flop") and ref.name[:1].lower() == typed.name.lower():
        return [Reading(q.value)]  # "4G" for a question in GiB
    compatible = typed.family == ref.family or typed.family in ("magnitude", "percent") and ref.family in ("other", "magnitude", "percent")
    if not compatible:
        return [Reading(q.value)]
    mixed = None not in (typed.binary, ref.binary) and typed.binary != ref.binary and typed.family == ref.family == "bytes"
    return [Reading(q.value * typed.scale / ref.scale, converted=typed.scale != ref.scale, decimal_vs_binary=mixed)]
