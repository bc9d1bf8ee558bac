"""Grading of typed answers and the mapping to FSRS ratings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.practice import quantities
from drill.practice.answers import Rating, judge, matched_key_points, normalise_shape, objective_rating, parse_choice, parse_rating
from drill.bank.load import load_paths

FIXTURE = Path(__file__).parent / "fixtures" / "quiz_bank.yaml"


def is_correct(q, text: str) -> bool | None:
    return judge(q, text).correct


def parse_number(text: str) -> float | None:
    """The number read, its unit set aside."""
    quantity = quantities.read(text)
    return None if quantity is None else quantity.value


@pytest.fixture(scope="module")
def bank():
    return load_paths([FIXTURE])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("b", {1}), ("B", {1}), (" AC ", {0, 2}), ("a,c", {0, 2}), ("a, c", {0, 2}), ("C A", {0, 2}), ("", None), ("Z", None), ("E", None), ("1", None),
     ("Ａ", {0}), ("ａｃ", {0, 2}), ("A、C", {0, 2}), ("A和C", {0, 2}), ("A，C", {0, 2}), ("a and c", {0, 2}), ("(B)", {1}), ("B.", {1})],
)
def test_parse_choice(text, expected):
    assert parse_choice(text, 4) == (frozenset(expected) if expected is not None else None)


def test_single_and_multi_choice(bank):
    single, multi = bank.get("fx-choice"), bank.get("fx-multi")
    assert is_correct(single, "b") and is_correct(single, "B")
    assert not is_correct(single, "a") and not is_correct(single, "ab") and not is_correct(single, "")
    assert is_correct(multi, "AC") and is_correct(multi, "c,a") and is_correct(multi, "a c")
    assert not is_correct(multi, "a") and not is_correct(multi, "abc")


@pytest.mark.parametrize(
    ("text", "value"),
    [("4", 4.0), ("4.0", 4.0), ("4 GiB", 4.0), ("4GiB", 4.0), ("4e9", 4e9), ("1,024", 1024.0), ("-0.5", -0.5), (".5", 0.5), ("1,000,000 tokens", 1e6), ("4x", 4.0), ("4-bit", 4.0), ("4 GiB/s", 4.0), ("25%", 25.0),
     ("2^29", 2.0**29), ("2**30", 2.0**30), ("4 × 10^9", 4e9), ("1.5 * 2^10 bytes", 1536.0), ("10^-3", 1e-3),
     ("29/38", 29 / 38), ("1 - 90/380", 1 - 90 / 380), ("(10*9)/(20*19)", 90 / 380), ("sqrt(64)", 8.0), ("√64", 8.0), ("ln 2", math.log(2)),
     ("e^-1", math.exp(-1)), ("13e9", 13e9), ("1.2k", 1.2), ("０.７６３", 0.763), ("２９／３８", 29 / 38), ("６４％", 64.0), ("57×", 57.0),
     ("≈ 4 GiB", 4.0), ("约 0.5", 0.5)],
)
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text", ["", "four", "GiB 4", "--4", "2^", "^3", "1,5", "4.5.6", "2^1000000", "4 4", "(B, H)", "1/0", "sqrt(-1)", "__import__('os')", "True"])
def test_parse_number_rejects(text):
    assert parse_number(text) is None


def test_numeric_tolerance(bank):
    q = bank.get("fx-numeric")  # value 4, tolerance 0.3
    assert is_correct(q, "4") and is_correct(q, "4.3 GiB") and is_correct(q, "3.7")
    assert not is_correct(q, "4.31") and not is_correct(q, "7") and not is_correct(q, "about four")


def test_numeric_zero_tolerance_forgives_round_off(bank):
    q = bank.get("fx-deep-2")  # value 16384, tolerance 0
    assert is_correct(q, "16384") and is_correct(q, "16,384") and is_correct(q, "1.6384e4")
    assert not is_correct(q, "16385")


@pytest.mark.parametrize("text", ["(b,h,t,d)", "[B, H, T, D]", "(B,H,T,D)", "torch.Size([b, h, t, d])", "B x H x T x D", " ( B , H , T , D ) ",
                                  "（B，H，T，D）", "【B，H，T，D】", "B×H×T×D", "B H T D", "[batch, heads, T, D]"])
def test_shape_forms(bank, text):
    assert is_correct(bank.get("fx-deep-3"), text)


@pytest.mark.parametrize("text", ["(B, H, D, T)", "(B, T, D)", "", "()", "(B, H, T, D, 1)"])
def test_shape_wrong(bank, text):
    assert not is_correct(bank.get("fx-deep-3"), text)


def test_shape_details():
    assert normalise_shape("(A , X , A)") == ("a", "x", "a")  # a dim named x is not a separator where commas are
    assert normalise_shape("2x8x1x21") == normalise_shape("2 × 8 × 1 × 21") == ("2", "8", "1", "21")
    assert normalise_shape("(b,)") == ("b",)
    assert normalise_shape("(B*H, T)") == normalise_shape("[b * h, t]") == ("b*h", "t")
    assert normalise_shape("Size([2, 8])") == ("2", "8")


dims = st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,3}|[1-9][0-9]{0,3}", fullmatch=True), min_size=1, max_size=5)


@given(dims, st.sampled_from(["({})", "[{}]", "torch.Size([{}])"]), st.sampled_from([",", ", ", " , "]))
def test_shape_normalisation_ignores_style(names, brackets, sep):
    written = brackets.format(sep.join(names))
    assert normalise_shape(written) == tuple(n.lower() for n in names)


def test_open_questions_are_not_auto_graded(bank):
    assert is_correct(bank.get("fx-open"), "anything") is None


def test_key_point_keywords_both_languages(bank):
    q = bank.get("fx-open")
    assert matched_key_points(q, "The VARIANCE grows") == [True, False]
    assert matched_key_points(q, "softmax 会饱和") == [False, True]
    assert matched_key_points(q, "") == [False, False]


@pytest.mark.parametrize(
    ("correct", "over", "cut", "rating"),
    [(True, False, False, Rating.GOOD), (True, True, False, Rating.HARD), (True, True, True, Rating.AGAIN), (False, False, False, Rating.AGAIN), (False, True, False, Rating.AGAIN)],
)
def test_objective_rating(correct, over, cut, rating):
    assert objective_rating(correct, over, cut) == rating


@pytest.mark.parametrize(("text", "rating"), [("1", Rating.AGAIN), ("4", Rating.EASY), (" good ", Rating.GOOD), ("h", Rating.HARD), ("0", None), ("", None), ("5", None)])
def test_parse_rating(text, rating):
    assert parse_rating(text) == rating


def test_numeric_answer_is_shown_exactly(bank):
    """A large value is shown digit for digit, never rounded to 6 significant digits."""
    from msgspec.structs import replace

    from drill.views.bank_view import correct_answers

    q = bank.get("fx-numeric")
    assert correct_answers(replace(q, value=536870912.0, tolerance=0.0, unit=""), "en") == ["536870912"]
    assert correct_answers(replace(q, value=5.88e23, tolerance=0.25, unit="FLOPs"), "en") == ["5.88e+23 ± 0.25 FLOPs"]


def test_key_point_keywords_match_formulas_however_they_are_typed():
    import msgspec

    from drill.bank.schema import Question

    kp = {"en": "cost", "zh": "代价", "keywords": {"en": ["h*T^2", "m_old - m_new"], "zh": ["代价"]}}
    other = {"en": "memory", "zh": "显存", "keywords": {"en": ["O(T)"], "zh": ["线性"]}}
    text = {"en": "x", "zh": "x"}
    q = msgspec.convert({"id": "f", "level": "L2", "topic": "t", "type": "open", "prompt": text, "answer": text, "key_points": [kp, other]}, Question)
    for typed in ("h · T²", "H×T^2 per layer", "exp(m_old − m_new)", "ｈ＊Ｔ＾２"):
        assert matched_key_points(q, typed) == [True, False], typed
    assert matched_key_points(q, "h T 3") == [False, False]


def test_a_tick_needs_the_keyword_as_a_word_not_inside_another():
    """`✔ phi-1 … and WRAP` was ticked for an answer naming neither: acronyms and names match whole words only,
    words must start a word (stems still tick), formulas still match inside longer formulas."""
    import msgspec

    from drill.bank.schema import Question

    def ticks(keywords, typed):
        kp = {"en": "x", "zh": "x", "keywords": {"en": list(keywords), "zh": list(keywords)}}
        other = {"en": "y", "zh": "y", "keywords": {"en": ["zzzz"], "zh": ["zzzz"]}}
        text = {"en": "x", "zh": "x"}
        q = msgspec.convert({"id": "k", "level": "L2", "topic": "t", "type": "open", "prompt": text, "answer": text, "key_points": [kp, other]}, Question)
        return matched_key_points(q, typed)[0]

    assert not ticks(["WRAP", "phi-1"], "a wrapper around synthetic textbooks, like phi-15")
    assert ticks(["WRAP", "phi-1"], "WRAP rephrases the web") and ticks(["WRAP", "phi-1"], "phi-1's textbooks")
    assert not ticks(["IO"], "the ratio of positions") and ticks(["IO"], "it is IO-bound") and ticks(["GQA"], "two GQAs")
    assert not ticks(["norm"], "an enormous cost") and ticks(["norm"], "normalisation") and ticks(["saturat"], "SATURATION")
    assert ticks(["W_Q"], "Q = xW_Q") and ticks(["model collapse"], "model\ncollapse")
