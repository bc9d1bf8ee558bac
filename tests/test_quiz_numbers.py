"""Numeric, shape and choice answers judged as a person would: arithmetic, percent, units, full width, prompt sizes."""

from __future__ import annotations

import msgspec
import pytest

from drill.practice.answers import judge
from drill.bank.load import load_bundled
from drill.bank.schema import ChoiceQuestion, NumericQuestion, Question, ShapeQuestion

TEXT = {"en": "x", "zh": "x"}
KEY_POINTS = [{"en": "a", "zh": "甲", "keywords": {"en": ["a"], "zh": ["甲"]}}, {"en": "b", "zh": "乙", "keywords": {"en": ["b"], "zh": ["乙"]}}]


def question(type: str, prompt: str = "x", **fields):
    data = {"id": "q", "level": "L2", "topic": "t", "type": type, "prompt": {"en": prompt, "zh": prompt}, "answer": TEXT, "key_points": KEY_POINTS}
    return msgspec.convert(data | fields, Question)


def numeric(value: float, unit: str = "", tolerance: float = 0.0):
    return question("numeric", value=value, unit=unit, tolerance=tolerance)


@pytest.mark.parametrize("typed", ["29/38", "1 - 90/380", "1-(10*9)/(20*19)", "0.763", "76.3%", "７６.３％", "０.７６３", "２９／３８", "≈0.763"])
def test_a_fraction_in_any_form(typed):
    assert judge(numeric(0.763, tolerance=0.001), typed).correct


@pytest.mark.parametrize(("typed", "right"), [("64%", True), ("６４％", True), ("0.64", True), ("64", False), ("6.4%", False)])
def test_percent_is_a_fraction_unless_the_unit_is_percent(typed, right):
    assert judge(numeric(0.64, tolerance=0.005), typed).correct is right


@pytest.mark.parametrize(("typed", "right"), [("1.39%", True), ("1.39", True), ("0.0139", True), ("139%", False)])
def test_a_question_in_percent(typed, right):
    assert judge(numeric(1.39, "%", tolerance=0.06), typed).correct is right


@pytest.mark.parametrize(
    ("typed", "right", "note"),
    [("4 GiB", True, None), ("4", True, None), ("4G", True, None), ("4096 MiB", True, "note_read_as"), ("4294967296", True, "note_read_as"),
     ("4294967296 B", True, "note_read_as"), ("4.29 GB", True, "note_gb_gib"), ("4 GB", False, "note_gb_gib"), ("4.3 GiB", False, None)],
)  # fmt: skip
def test_bytes_in_the_questions_unit_and_gb_against_gib(typed, right, note):
    verdict = judge(numeric(4, "GiB", tolerance=0.02), typed)
    assert (verdict.correct, verdict.note) == (right, note)
    if note:
        assert verdict.values["typed"] == typed and verdict.values["value"].endswith(" GiB")


def test_gib_against_a_question_in_gb():
    verdict = judge(numeric(252, "GB", tolerance=5), "235 GiB")  # 235 · 2^30 bytes = 252.3 GB
    assert verdict.correct and verdict.note == "note_gb_gib" and verdict.values["value"] == "252.3 GB"


@pytest.mark.parametrize("typed", ["6.738B", "6.74 billion", "6738M", "6.738e9", "6.738", "6.738 billion parameters", "6738 M params"])
def test_magnitudes_against_a_count_in_billions(typed):
    assert judge(numeric(6.738, "billion parameters", tolerance=0.02), typed).correct


@pytest.mark.parametrize(("typed", "value", "unit"), [("7B", 7e9, ""), ("13e9", 13e9, ""), ("1.2k", 1200, "tokens"), ("1.2k tokens", 1200, "tokens"),
                                                      ("0.007 s", 7, "ms"), ("7000 µs", 7, "ms"), ("57×", 57, "×"), ("57x", 57, "×"), ("2^29", 536870912, "")])  # fmt: skip
def test_units_and_magnitudes(typed, value, unit):
    assert judge(numeric(value, unit), typed).correct


@pytest.mark.parametrize(("typed", "unit"), [("6.95", "× 1e-5"), ("6.95e-5", "× 1e-5"), ("6.95 × 10^-5", "× 1e-5"), ("6.95 × lr", "× lr"), ("6.95", "× lr")])
def test_a_unit_that_is_a_multiplier(typed, unit):
    assert judge(numeric(6.95, unit, tolerance=0.01), typed).correct


@pytest.mark.parametrize("typed", ["sqrt(64)", "√64", "2^3", "e^(ln 8)", "ln(e^8)"])
def test_functions_and_constants(typed):
    assert judge(numeric(8), typed).correct


@pytest.mark.parametrize("typed", ["four", "4 or 5", "1,5", "--4", "2^1000000", "GiB 4", "__import__('os').system('true')", "'a' * 1000000000", "9^9^9"])
def test_unreadable_numbers_are_not_wrong_answers(typed):
    verdict = judge(numeric(4), typed)
    assert verdict.correct is False and verdict.unreadable == "unreadable_number" and verdict.values == {"text": typed}


def test_an_empty_answer_gives_up():
    assert judge(numeric(4), "  ") == judge(numeric(4), "")
    assert judge(numeric(4), "").correct is False and judge(numeric(4), "").unreadable is None


SIZES = "Decoding: B=2, h=8, d_k=64, d_model = 512; the cache holds 20 tokens plus the new one."


@pytest.mark.parametrize("typed", ["[2, 8, 1, 21]", "（2，8，1，21）", "【2，8，1，21】", "2×8×1×21", "2x8x1x21", "torch.Size([2, 8, 1, 21])",
                                   "(B, h, 1, 21)", "[b, H, 1, 20+1]", "[B, d_model/d_k, 1, 21]", "2 8 1 21"])  # fmt: skip
def test_integers_and_the_prompts_symbols_against_an_integer_shape(typed):
    assert judge(question("shape", SIZES, shape="[2, 8, 1, 21]"), typed).correct


@pytest.mark.parametrize("typed", ["[2, 8, 21, 1]", "[2, 8, 21]", "[B, h, 1, T]", "[2, 64, 1, 21]"])
def test_wrong_shapes_stay_wrong(typed):
    assert judge(question("shape", SIZES, shape="[2, 8, 1, 21]"), typed).correct is False


def test_symbols_against_a_symbolic_shape_with_some_sizes_given():
    q = question("shape", "d_model = 512, h = 8, batch size B, length T.", shape="[B, 8, T, 64]")
    for typed in ("[B, 8, T, 64]", "B H T 64", "[batch, h, T, d_model/h]", "(b, 8, t, 64)"):
        assert judge(q, typed).correct, typed
    assert judge(q, "[B, 8, 64, T]").correct is False
    assert judge(q, "[[").unreadable == "unreadable_shape"


def test_subscripts_with_or_without_the_underscore():
    q = question("shape", "Queries of length T_q, keys of length T_k.", shape="[B, H, T_q, T_k]")
    assert judge(q, "[B, H, Tq, Tk]").correct and judge(q, "(b, h, t_q, t_k)").correct and not judge(q, "[B, H, T_k, T_q]").correct


def test_choices_typed_with_a_chinese_input_method():
    q = question("choice", choices=[TEXT, TEXT, TEXT, TEXT], correct=[0, 2])
    for typed in ("AC", "ａｃ", "Ａ，Ｃ", "A、C", "A和C", "c a"):
        assert judge(q, typed).correct, typed
    assert judge(q, "A").correct is False
    assert judge(q, "AZ").unreadable == "unreadable_choice" and judge(q, "AZ").values["letters"] == "A–D"


def test_every_bundled_reference_answer_is_judged_right():
    """The bank's own answers, written the way the verdict shows them, must be readable and right."""
    for q in load_bundled().questions.values():
        if isinstance(q, ChoiceQuestion):
            typed = "".join("ABCDEFGH"[i] for i in sorted(q.correct_set))
        elif isinstance(q, NumericQuestion):
            typed = f"{q.value:.15g} {q.unit}".strip()
        elif isinstance(q, ShapeQuestion):
            typed = q.shape
        else:
            continue
        verdict = judge(q, typed)
        assert verdict.correct and not verdict.unreadable, (q.id, typed, verdict)
