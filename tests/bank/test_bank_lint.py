"""The validator-only rules (`drill bank validate`): keyword quality and near-duplicate prompts."""

from __future__ import annotations

import msgspec
import pytest

from drill.bank.checks import keyword_problems
from drill.bank.duplicates import near_duplicates, normalise
from drill.bank.load import load_paths
from drill.bank.schema import Question
from drill.paths import bundled_bank_dir


def question(qid="x", qtype="open", prompt="Why scale attention scores by the square root of d_k?", answer="Variance grows as d_k · 1.", keywords=("variance",), **extra):
    raw = {
        "id": qid, "type": qtype, "level": "L1", "topic": "t",
        "prompt": {"en": prompt, "zh": "为什么？"},
        "answer": {"en": answer, "zh": answer},
        "key_points": [
            {"en": "a", "zh": "a", "keywords": {"en": list(keywords), "zh": list(keywords)}},
            {"en": "b", "zh": "b", "keywords": {"en": ["d_k"], "zh": ["d_k"]}},
        ],
        **extra,
    }
    return msgspec.convert(raw, Question)


def messages(q):
    return [message for _, message in keyword_problems(q)]


def test_the_bundled_bank_passes_every_validator_rule():
    """Every bundled file, including the newest topics: keywords, key points ticked by their own answers, no near-duplicates."""
    bank = load_paths([bundled_bank_dir()], use_cache=False, lint=True)  # raises BankError listing each problem
    assert len(bank.questions) >= 400


@pytest.mark.parametrize("word", ["3", "0.5", "1,024", "-64", "−64", "5%", "０.５", "Loss", "KL", "ＫＬ", " position ", "注意力"])
def test_bare_numbers_and_stop_words_are_refused_in_open_questions(word):
    found = messages(question(keywords=(word, "variance"), answer=f"Variance grows with d_k; {word}."))
    assert len(found) == 2 and all("keywords" in m for m in found), found  # once per language


@pytest.mark.parametrize("word", ["8 heads", "KL divergence", "position_ids", "base 10000", "2^31", "dO · O"])
def test_specific_keywords_are_accepted(word):
    assert messages(question(keywords=(word,), answer=f"Variance grows: {word} and d_k.")) == []


def test_objective_questions_may_use_numbers_as_keywords():
    numeric = question(qtype="numeric", keywords=("36",), answer="C(9, 2) = 36 pairs of d_k.", value=36)
    assert messages(numeric) == []


def test_a_key_point_its_reference_answer_misses_is_reported_once_with_the_languages():
    found = messages(question(keywords=("saturat",)))
    assert found == ["key_points.0: no keyword occurs in the en or zh reference answer, so that answer would not tick it"]


def test_the_answer_check_folds_formulas_like_the_quiz_does():
    """h·T² in the answer ticks the keyword h*T^2, exactly as a typed answer would."""
    assert messages(question(keywords=("h*T^2",), answer="There are h·T² scores of width d_k.")) == []


def test_near_duplicates_flag_a_copy_with_an_extra_clause():
    a = question("a", prompt="How many legs does the imaginary zorblax creature have on each side?")
    b = question("b", prompt="How many legs does the imaginary zorblax creature have on each side of its body?")
    c = question("c", prompt="Why does the zorblax creature hibernate through the long winter months?")
    found = near_duplicates([a, b, c])
    assert [(i, j) for i, j, _ in found] == [(0, 1)]
    assert found[0][2] >= 90


def test_near_duplicates_ignore_word_order_latex_and_shared_filler():
    a = question("a", prompt=r"Which statements about the KV cache of $\mathrm{GQA}$ decoding are true? Select all that apply.")
    b = question("b", prompt="Select all that apply: which statements are true about GQA decoding and its KV cache?")
    assert normalise(a.prompt.en) == "kv cache gqa decoding"
    assert [(i, j) for i, j, _ in near_duplicates([a, b])] == [(0, 1)]


def test_short_prompts_and_different_questions_are_not_flagged():
    short = [question("a", prompt="What is RoPE?"), question("b", prompt="What is RoPE? Explain.")]
    assert near_duplicates(short) == []  # under MIN_WORDS after folding: too little to compare
    different = [
        question("c", prompt="Which statements about RoPE applied to queries and keys are true? Select all that apply."),
        question("d", prompt="Which statements about RMSNorm compared with LayerNorm are true? Select all that apply."),
    ]
    assert near_duplicates(different) == []


def test_the_prefix_filter_loses_no_pair_the_exhaustive_scan_finds(monkeypatch):
    """At a looser threshold (80) on the whole bundled bank, filtered and exhaustive scoring agree."""
    from rapidfuzz import fuzz

    from drill.bank import duplicates

    monkeypatch.setattr(duplicates, "THRESHOLD", 80.0)
    questions = list(load_paths([bundled_bank_dir()]).questions.values())
    texts = [normalise(q.prompt.en) for q in questions]
    eligible = [i for i, t in enumerate(texts) if len(t.split()) >= duplicates.MIN_WORDS]
    exhaustive = {
        (i, j)
        for a, i in enumerate(eligible)
        for j in eligible[a + 1 :]
        if fuzz.token_set_ratio(texts[i], texts[j], score_cutoff=80.0)
    }
    assert exhaustive, "the check needs some pairs to compare"
    assert {(i, j) for i, j, _ in near_duplicates(questions)} == exhaustive


def test_a_keyword_most_answers_of_its_topic_contain_is_refused():
    """`experts` in a MoE topic ticks every answer; the rule counts reference answers of the topic, as typed answers are matched."""
    from drill.bank.checks import GENERIC_MIN_TOPIC, generic_keyword_problems

    def moe(i, answer, keywords=("router",)):
        return question(f"q{i}", prompt=f"Zorblax question number {i} about routing?", answer=answer, keywords=keywords)

    filler = [moe(i, f"The experts share load number {i}.") for i in range(GENERIC_MIN_TOPIC - 1)]
    target = moe(99, "A router picks experts; the router is trained with d_k.", keywords=("experts", "router"))
    found = generic_keyword_problems([*filler, target])
    assert list(found) == ["q99"]
    assert [keys for keys, _ in found["q99"]] == [["key_points", 0, "keywords", "en", 0], ["key_points", 0, "keywords", "zh", 0]]
    assert "100% of the t reference answers" in found["q99"][0][1]
    assert generic_keyword_problems(filler[:3] + [target]) == {}  # a small topic is not judged


def test_text_whose_screen_shows_markup_is_refused_and_rendered_bold_is_not():
    from drill.bank.checks import render_problems

    clean = question(answer="**要点。**方差随 d_k 增长 `x**2`，$e^{-0.1}$ variance.")
    assert render_problems(clean) == []
    dirty = question(answer="Variance grows as e^{-0.1} with d_k; see \\cdot and `unclosed.")
    (keys, message), *rest = render_problems(dirty)
    assert keys == ["answer", "en"] and "'{', '}', '\\\\cdot', '`'" in message, message
    assert [k for k, _ in rest] == [["answer", "zh"]]


@pytest.mark.parametrize(
    ("en", "zh"),
    [("Same corpus: how many merges?", "一共几次合并？"), ("As above, how many merges?", "一共几次合并？"),
     ("How many merges?", "沿用上题，一共几次合并？"), ("How many merges?", "同上，一共几次合并？"),
     ("Using the previous question's numbers, how many merges?", "一共几次合并？")],
)  # fmt: skip
def test_a_prompt_that_leans_on_another_question_is_flagged(en, zh):
    from drill.bank.checks import reference_problems

    q = msgspec.structs.replace(question(), prompt=msgspec.convert({"en": en, "zh": zh}, type(question().prompt)))
    assert len(reference_problems(q)) == 1


def test_a_standalone_prompt_is_not_flagged():
    from drill.bank.checks import reference_problems

    assert reference_problems(question(prompt="Is the same tokenizer needed by draft and target models?")) == []
