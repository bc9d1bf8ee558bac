"""The bundled bank meets the coverage the project promises, counted from the loaded bank."""

from __future__ import annotations

import re

import pytest

from drill.bank.load import load_bundled

ORIGINAL_TOPICS = (
    "attention-core", "masks", "multi-head", "position", "transformer-block", "complexity",
    "flash-attention", "inference", "gpt-scaling", "alignment", "long-context", "evaluation",
)  # fmt: skip
MIN_QUESTIONS, MIN_TOPICS, MIN_PER_TOPIC = 750, 24, 16
NEW_TOPICS, MIN_PER_NEW_TOPIC = ("rag", "agents", "hallucination", "architectures"), 20  # Bank III
MIN_BY_LEVEL = {"L1": 100, "L2": 150, "L3": 100}


@pytest.fixture(scope="module")
def bank():
    return load_bundled()


def test_total_and_topics(bank):
    """The whole interview: 750+ questions over 24+ topics, every topic 16+ with all three levels, each new one 20+."""
    questions = list(bank.questions.values())
    assert len(questions) >= MIN_QUESTIONS
    assert len(bank.topics) >= MIN_TOPICS and set(ORIGINAL_TOPICS) <= set(bank.topics)
    for topic in bank.topics:
        mine = [q for q in questions if q.topic == topic]
        assert len(mine) >= (MIN_PER_NEW_TOPIC if topic in NEW_TOPICS else MIN_PER_TOPIC), topic
        assert {q.level for q in mine} == {"L1", "L2", "L3"}, topic
    assert set(NEW_TOPICS) <= set(bank.topics)


def test_levels(bank):
    for level, minimum in MIN_BY_LEVEL.items():
        assert sum(q.level == level for q in bank.questions.values()) >= minimum, level


def test_at_least_40_percent_objective(bank):
    questions = list(bank.questions.values())
    assert sum(q.objective for q in questions) / len(questions) >= 0.40


def test_every_question_names_a_source(bank):
    assert [q.id for q in bank.questions.values() if not q.references] == []


def test_forty_interviewer_chains_of_depth_three(bank):
    """Distinct L1 -> L2 -> L3 paths through follow_ups."""
    qs = bank.questions
    paths = {
        (a.id, b_id, c_id)
        for a in qs.values() if a.level == "L1"
        for b_id in a.follow_ups if qs[b_id].level == "L2"
        for c_id in qs[b_id].follow_ups if qs[c_id].level == "L3"
    }
    assert len(paths) >= 40
    assert len({p[0] for p in paths}) >= 20, "chains should start from many different L1 questions"


def test_every_topic_has_a_sixty_second_answer(bank):
    for topic in bank.topics:
        pitches = [q for q in bank.select(topics=[topic], tags=["pitch"])]
        assert pitches, topic
        for q in pitches:
            assert q.type == "open" and q.time_limit == 60, q.id
            assert 100 <= len(q.answer.en.split()) <= 180, f"{q.id}: a 60-second answer is ~120-160 spoken words"


def test_choice_questions_are_well_formed(bank):
    """3-5 options; a multi-select prompt says so in both languages, a single-answer one never does."""
    for q in bank.select(types=["choice"]):
        assert 3 <= len(q.choices) <= 5, q.id
        assert not re.search(r"\b(choose|pick|select) (\d+|two|three|four)\b", q.prompt.en, re.I), f"{q.id}: the count gives part of the answer away"
        assert not re.search(r"选\s*[2-5两二三四]\s*[个项]", q.prompt.zh), q.id
        if isinstance(q.correct, list):
            assert "select all that apply" in q.prompt.en.lower(), q.id
            assert "多选" in q.prompt.zh, q.id
        else:
            assert "select all" not in q.prompt.en.lower(), q.id


def _numbers(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in re.findall(r"\d[\d,]*\.?\d*(?:e[-+]?\d+)?", text)]


def test_numeric_answers_show_their_working(bank):
    """The reference answer of a numeric question is a calculation, not a bare number."""
    for q in bank.select(types=["numeric"]):
        for lang in ("en", "zh"):
            text = q.answer.get(lang)
            assert len(_numbers(text)) >= 3, f"{q.id} ({lang}) shows no worked calculation"


def test_chinese_keywords_are_chinese(bank):
    """A Chinese open answer is matched by Chinese keywords (objective ones by numbers)."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for q in bank.select(types=["open"]):
        assert any(cjk.search(kw) for point in q.key_points for kw in point.keywords.zh), q.id
