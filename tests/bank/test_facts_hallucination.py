"""Fact checks for questions/hallucination.yaml (topic ``hallucination``, ids ``hal-``).

Every numeric answer is recomputed from first principles: temperature sampling with real torch
softmax, the SimpleQA F-score as the official simple-evals code computes it, discrete semantic
entropy over meaning clusters built from sampled strings, FActScore averaged per response with
abstentions excluded, ECE binned from raw predictions, the abstention threshold of a penalised
score, and SAFE's F1@K as google-deepmind/long-form-factuality computes it. The runnable claims in
the prose (the T = 1 comparison, the naive string entropy, the pooled FActScore, the short-answer
F1@K, the penalised scores in the metric trade-off question...) are re-run too. Structure: every
question has references naming a primary source, 2-5 key points that its own reference answer hits
in both languages, the topic has all three levels, a pitch of 100-180 words and at least 45%
objective questions.
"""

from __future__ import annotations

import math
import re

import pytest

torch = pytest.importorskip("torch")

PREFIX = "hal-"


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of questions/hallucination.yaml, by id."""
    found = {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem == "hallucination"}
    assert found and all(qid.startswith(PREFIX) for qid in found)
    return found


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_topic_levels_types_and_pitch(mine):
    qs = list(mine.values())
    assert len(qs) >= 28
    assert {q.topic for q in qs} == {"hallucination"}
    assert {q.level for q in qs} == {"L1", "L2", "L3"}
    assert sum(q.objective for q in qs) / len(qs) >= 0.45
    pitches = [q for q in qs if "pitch" in q.tags]
    assert len(pitches) == 1
    pitch = pitches[0]
    assert pitch.type == "open" and pitch.time_limit == 60
    assert 100 <= len(pitch.answer.en.split()) <= 180


def test_key_points_and_references(mine):
    primary = re.compile(r"arXiv|Nature|ACM|NeurIPS|ICLR|ICML|EMNLP|NAACL|ACL|TACL|STOC|simple-evals|FActScore|long-form-factuality|Technical Report")
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        assert any(primary.search(r) for r in x.references), (x.id, x.references)
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[-+−]?[\d.,]+%?", kw.strip()), (x.id, kw)  # never a bare number


def test_reference_answers_hit_every_key_point(mine):
    """A good typed answer is matched by keywords; the reference answer must be such an answer, in both languages."""
    for x in mine.values():
        for lang in ("en", "zh"):
            text = re.sub(r"\s+", " ", getattr(x.answer, lang)).lower()  # line breaks fold to spaces, as on screen
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_choice_questions(mine):
    for x in mine.values():
        if x.type != "choice":
            continue
        assert 3 <= len(x.choices) <= 5, x.id
        if isinstance(x.correct, list):
            assert "select all that apply" in x.prompt.en.lower() and "多选" in x.prompt.zh, x.id
            assert len(x.correct) >= 2 and all(0 <= i < len(x.choices) for i in x.correct), x.id
        else:
            assert 0 <= x.correct < len(x.choices), x.id
        assert "choose two" not in x.prompt.en.lower(), x.id


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        shown = {f"{x.value:g}", f"{x.value:.3f}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


def test_follow_ups_go_deeper_or_sideways(mine, bank):
    order = {"L1": 1, "L2": 2, "L3": 3}
    for x in mine.values():
        for f in x.follow_ups:
            assert f in bank.questions, (x.id, f)
            assert order[bank.questions[f].level] >= order[x.level], (x.id, f)


# Every numeric question must have a check below; adding one without a check fails.
NUMERIC_CHECKED = {
    "hal-temperature-wrong-prob",
    "hal-simpleqa-fscore",
    "hal-semantic-entropy-numeric",
    "hal-factscore-numeric",
    "hal-ece-binned-numeric",
    "hal-abstain-threshold",
    "hal-f1-at-k-numeric",
}


def test_every_numeric_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert not [x.id for x in mine.values() if x.type == "shape"]


# ------------------------------------------------------------ recomputation ---


def test_temperature_wrong_prob(bank):
    x = bank.questions["hal-temperature-wrong-prob"]
    logits = torch.tensor([4.0, 2.0, 1.0], dtype=torch.float64)  # correct year first
    p2 = torch.softmax(logits / 2.0, dim=0)
    p1 = torch.softmax(logits / 1.0, dim=0)
    wrong2 = float(1 - p2[0])
    assert close(x, wrong2)
    assert round(wrong2, 4) == 0.3715
    assert round(float(p2[0]), 3) == 0.629
    assert round(float(1 - p1[0]), 3) == 0.156  # "at T = 1 ... 0.156"
    assert wrong2 > 2 * float(1 - p1[0])  # "more than doubled"
    e = [math.exp(v) for v in (2.0, 1.0, 0.5)]
    assert (round(e[0], 3), round(e[1], 3), round(e[2], 3), round(sum(e), 3)) == (7.389, 2.718, 1.649, 11.756)
    assert int(torch.argmax(logits)) == 0  # greedy always picks the right year


def simpleqa_f1(correct: int, incorrect: int, not_attempted: int) -> float:
    """As openai/simple-evals simpleqa_eval.py aggregates: F1 of is_correct and accuracy_given_attempted."""
    n = correct + incorrect + not_attempted
    is_correct = correct / n
    attempted = (correct + incorrect) / n
    given = is_correct / attempted if attempted > 0 else 0
    return 2 * given * is_correct / (given + is_correct) if given + is_correct > 0 else 0


def test_simpleqa_fscore(bank):
    x = bank.questions["hal-simpleqa-fscore"]
    f = simpleqa_f1(380, 220, 400)
    assert close(x, f)
    assert abs(380 / 600 - 0.6333) < 1e-4
    assert abs(2 * 0.38 * (380 / 600) - 0.4813) < 1e-4 and abs(0.38 + 380 / 600 - 1.0133) < 1e-4
    assert simpleqa_f1(450, 550, 0) == pytest.approx(0.45)  # the always-answering model
    assert f > simpleqa_f1(450, 550, 0)
    assert round((0.38 + 380 / 600) / 2, 3) == 0.507  # the arithmetic-mean pitfall


def semantic_entropy(answers: list[str]) -> float:
    """Discrete semantic entropy: cluster by meaning (here the year each answer states), entropy of cluster frequencies."""
    clusters: dict[str, int] = {}
    for a in answers:
        meaning = re.search(r"\d{4}", a).group()  # stands in for bidirectional entailment
        clusters[meaning] = clusters.get(meaning, 0) + 1
    p = torch.tensor(list(clusters.values()), dtype=torch.float64) / len(answers)
    return float(-(p * p.log()).sum())


def test_semantic_entropy(bank):
    x = bank.questions["hal-semantic-entropy-numeric"]
    answers = [
        "1998", "It was founded in 1998.", "In 1998", "The company dates from 1998.", "Founded 1998",
        "1998, I believe", "2001", "It was founded in 2001.", "Around 2001", "1995",
    ]  # fmt: skip
    assert len(set(answers)) == 10  # "all 10 are worded differently"
    se = semantic_entropy(answers)
    assert close(x, se)
    assert [round(-p * math.log(p), 4) for p in (0.6, 0.3, 0.1)] == [0.3065, 0.3612, 0.2303]
    naive = float(-(torch.full((10,), 0.1, dtype=torch.float64) * torch.full((10,), 0.1, dtype=torch.float64).log()).sum())
    assert round(naive, 3) == 2.303 == round(math.log(10), 3)
    assert round(math.log(3), 3) == 1.099 and se < math.log(3)
    assert semantic_entropy(["1998"] * 10) == 0


def test_factscore(bank):
    x = bank.questions["hal-factscore-numeric"]
    responses = [(16, 20), None, (5, 10), (27, 30)]  # None = abstained
    per_response = [s / n for s, n in (r for r in responses if r is not None)]
    score = sum(per_response) / len(per_response)
    assert close(x, score)
    pooled = sum(s for s, _ in filter(None, responses)) / sum(n for _, n in filter(None, responses))
    assert pooled == pytest.approx(0.8) and sum(s for s, _ in filter(None, responses)) == 48
    assert sum(r is not None for r in responses) / len(responses) == 0.75  # response ratio
    counted_as_zero = sum(per_response) / len(responses)
    assert not close(x, counted_as_zero)  # the pitfall

    # shmsw25/FActScore's get_score applies a length penalty by default (gamma = 10):
    # score * (1.0 if len(facts) > gamma else exp(1 - gamma / len(facts))). The answer says it changes nothing here.
    gamma = 10
    penalised = [s / n * (1.0 if n > gamma else math.exp(1 - gamma / n)) for s, n in filter(None, responses)]
    assert close(x, sum(penalised) / len(penalised))
    assert "γ = 10" in x.answer.en and "γ = 10" in x.answer.zh
    assert math.exp(1 - gamma / 5) < 0.5  # a 5-fact answer would lose over half its score, so the claim is not vacuous


def ece(preds: list[tuple[float, bool]], edges: list[float]) -> float:
    """Expected calibration error with bins [e_i, e_{i+1}) and the last bin closed."""
    total, n = 0.0, len(preds)
    for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
        last = i == len(edges) - 2
        b = [(c, ok) for c, ok in preds if lo <= c < hi or (last and c == hi)]
        if b:
            conf = sum(c for c, _ in b) / len(b)
            acc = sum(ok for _, ok in b) / len(b)
            total += len(b) / n * abs(acc - conf)
    return total


def test_ece_binned(bank):
    x = bank.questions["hal-ece-binned-numeric"]
    preds = [
        (0.95, True), (0.95, True), (0.92, False), (0.98, True), (0.80, True),
        (0.75, False), (0.85, False), (0.60, True), (0.55, False), (0.65, False),
    ]  # fmt: skip
    value = ece(preds, [0.5, 0.7, 0.9, 1.0])
    assert close(x, value)
    t = torch.tensor([c for c, _ in preds], dtype=torch.float64)
    y = torch.tensor([float(ok) for _, ok in preds], dtype=torch.float64)
    bins = torch.bucketize(t, torch.tensor([0.7, 0.9], dtype=torch.float64), right=True)
    gaps = [abs(float(y[bins == k].mean() - t[bins == k].mean())) for k in range(3)]
    weights = [float((bins == k).double().mean()) for k in range(3)]
    assert weights == [0.3, 0.3, 0.4]
    assert [round(g, 3) for g in gaps] == [0.267, 0.467, 0.2]
    assert all(float(t[bins == k].mean()) > float(y[bins == k].mean()) for k in range(3))  # every bin overconfident
    assert round(sum(gaps) / 3, 3) == 0.311 and not close(x, sum(gaps) / 3)  # the unweighted pitfall


def test_abstain_threshold(bank):
    x = bank.questions["hal-abstain-threshold"]
    penalty = 3.0
    # expected score of answering, p - (1 - p) * penalty, crosses abstaining (0) at the threshold
    threshold = penalty / (1 + penalty)
    assert close(x, threshold)
    score = lambda p: p - (1 - p) * penalty  # noqa: E731
    assert score(threshold) == pytest.approx(0) and score(threshold + 1e-6) > 0 > score(threshold - 1e-6)
    assert score(0.6) == pytest.approx(-0.6)
    for t, k in ((0.75, 3), (0.9, 9), (0.5, 1)):  # Kalai et al.'s penalty t / (1 - t)
        assert t / (1 - t) == pytest.approx(k) and k / (1 + k) == pytest.approx(t)
    assert all(p - (1 - p) * 0.0 >= 0 for p in (0.0, 0.01, 0.5))  # binary grading: guessing never loses


def f1_at_k(supported: int, not_supported: int, k: int) -> float:
    """As google-deepmind/long-form-factuality eval/metric_utils.calculate_metrics."""
    if supported == 0:
        return 0
    precision = supported / (supported + not_supported)
    recall = min(1, supported / k)
    return 2 * precision * recall / (precision + recall)


def test_f1_at_k(bank):
    x = bank.questions["hal-f1-at-k-numeric"]
    assert close(x, f1_at_k(40, 10, 64))
    assert 2 * 0.8 * 0.625 == pytest.approx(1.0) and 0.8 + 0.625 == pytest.approx(1.425)
    assert round(f1_at_k(10, 0, 64), 3) == 0.270  # the short, error-free answer
    assert round(10 / 64, 3) == 0.156
    assert f1_at_k(100, 0, 64) == f1_at_k(64, 0, 64) == 1.0  # recall saturates above K
    assert f1_at_k(0, 5, 64) == 0


def test_metric_tradeoff_claims(bank):
    x = bank.questions["hal-metric-tradeoff"]
    old, new = (40, 35, 25), (44, 50, 6)
    assert sum(old) == sum(new) == 100
    assert round(100 * old[0] / (old[0] + old[1])) == 53 and round(100 * new[0] / (new[0] + new[1])) == 47
    assert (old[2] - new[2], new[0] - old[0], new[1] - old[1]) == (19, 4, 15)
    assert (old[0] - old[1], new[0] - new[1]) == (5, -6)  # +1 / 0 / -1 scoring
    assert round(simpleqa_f1(*old), 3) == 0.457 and round(simpleqa_f1(*new), 3) == 0.454
    assert "0.457 vs 0.454" in x.answer.en and "0.457 对 0.454" in x.answer.zh


def test_kalai_singleton_example_is_consistent(bank):
    x = bank.questions["hal-kalai-singleton"]
    assert x.correct == 0 and "20%" in x.choices[0].en and "20%" in x.answer.en
