"""Fact checks for questions/agents.yaml (topic ``agents``).

Every numeric answer is recomputed from first principles (pass^k and pass@k from a per-trial
success rate, τ-bench's combinatorial pass^k estimator and its unbiasedness, supervised-token
counts under assistant-only loss masking built as a real torch mask, the quadratic input-token
cost of re-sending a ReAct transcript, the binomial standard error of a 500-task score), the
shape answer is produced by a real GRPO-style masked loss in torch, and the runnable claims in
the prose are re-run (pass^k falls and pass@k rises with k; heterogeneous tasks make pass^k
decay more slowly than (mean p)^k; the naive plug-in estimate is far off). Structure: every
question has 2–5 key points, references, and a reference answer that hits every key point in
both languages; choice questions have 3–5 options and multi-select prompts say so.
"""

from __future__ import annotations

import math
import random

import pytest

from drill.practice.answers import matched_key_points

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of questions/agents.yaml, by id."""
    qs = {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem == "agents"}
    assert qs, "questions/agents.yaml is not loaded"
    return qs


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-9 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_topic_size_levels_and_objective_share(mine):
    assert len(mine) >= 32
    assert all(x.id.startswith("agent-") and x.topic == "agents" for x in mine.values())
    levels = {lvl: sum(x.level == lvl for x in mine.values()) for lvl in ("L1", "L2", "L3")}
    assert all(n >= 8 for n in levels.values()), levels
    objective = sum(x.type in ("choice", "numeric", "shape") for x in mine.values())
    assert objective / len(mine) >= 0.45
    pitches = [x for x in mine.values() if "pitch" in (x.tags or [])]
    assert len(pitches) == 1 and pitches[0].type == "open" and pitches[0].time_limit == 60
    assert 100 <= len(pitches[0].answer.en.split()) <= 180


def test_key_points_and_references(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        # at least one primary source: a paper with an arXiv id or venue, or official docs / specification / vendor report
        primary = ("arXiv:", "ICLR", "NeurIPS", "ICML", "ACL", "AISTATS", "TACL", "UIST", "documentation", "specification", "Anthropic", "OpenAI")
        assert any(any(p in r for p in primary) for r in x.references), x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)


def test_reference_answers_hit_every_key_point(mine):
    """A good typed answer ticks every key point; the reference answer must be such an answer, in both languages."""
    for x in mine.values():
        for lang in ("en", "zh"):
            text = getattr(x.answer, lang)
            hits = matched_key_points(x, text)
            assert all(hits), (x.id, lang, hits)
            low = text.lower()
            for i, kp in enumerate(x.key_points):
                assert any(w.lower() in low for w in getattr(kp.keywords, lang)), (x.id, lang, i)


def test_choice_questions_are_well_formed(mine):
    for x in mine.values():
        if x.type != "choice":
            continue
        assert 3 <= len(x.choices) <= 5, x.id
        correct = x.correct if isinstance(x.correct, list) else [x.correct]
        assert all(0 <= c < len(x.choices) for c in correct), x.id
        if len(correct) > 1:
            assert "select all that apply" in x.prompt.en.lower() and "多选" in x.prompt.zh, x.id
        assert "choose two" not in x.prompt.en.lower(), x.id


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        shown = {f"{v:g}", f"{v:,.0f}" if v >= 1000 else f"{v:g}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


# Every numeric and shape question must have a check below; adding one without a check fails.
NUMERIC_CHECKED = {
    "agent-pass-hat-k-basic",
    "agent-pass-hat-threshold",
    "agent-pass-hat-estimator",
    "agent-fc-loss-mask-numeric",
    "agent-react-context-cost",
    "agent-benchmark-stderr",
}
SHAPE_CHECKED = {"agent-rl-advantage-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


def shape_of(text: str, **sizes: int) -> tuple[int, ...]:
    """Evaluate a symbolic shape such as ``[B*G, T]`` with concrete sizes."""
    dims = [d.strip() for d in text.strip("[]() ").split(",")]
    env = {k.lower(): v for k, v in sizes.items()}
    return tuple(int(eval(d.lower(), {"__builtins__": {}}, env)) for d in dims)  # noqa: S307 - our own data


# ---------------------------------------------------------------- pass^k ---


def pass_hat(p: float, k: int) -> float:
    return p**k


def pass_at(p: float, k: int) -> float:
    return 1 - (1 - p) ** k


def test_pass_hat_k_basic(bank):
    x = bank.questions["agent-pass-hat-k-basic"]
    assert close(x, 100 * pass_hat(0.8, 4))
    assert math.isclose(pass_hat(0.8, 4), 0.4096)
    assert math.isclose(pass_at(0.8, 4), 0.9984)  # "pass@4 ... 99.84%"
    assert "99.84%" in x.answer.en and "99.84%" in x.answer.zh
    # "pass@k rises with k ... pass^k falls with k"
    ks = range(1, 12)
    assert all(pass_at(0.8, k + 1) > pass_at(0.8, k) for k in ks)
    assert all(pass_hat(0.8, k + 1) < pass_hat(0.8, k) for k in ks)


def test_pass_hat_k_by_simulation():
    """pass^k = p^k is the probability that k independent Bernoulli(p) trials all succeed."""
    rng = random.Random(0)
    n = 200_000
    hits = sum(all(rng.random() < 0.8 for _ in range(4)) for _ in range(n))
    assert abs(hits / n - 0.4096) < 0.005


def test_pass_hat_threshold(bank):
    x = bank.questions["agent-pass-hat-threshold"]
    k = next(k for k in range(1, 100) if pass_hat(0.9, k) < 0.5)
    assert close(x, k)
    assert round(math.log(0.5) / math.log(0.9), 2) == 6.58
    assert round(0.9**6, 3) == 0.531 and round(0.9**7, 3) == 0.478
    assert round(math.log(2), 4) == 0.6931 and round(-math.log(0.9), 4) == 0.1054


def test_heterogeneous_tasks_decay_more_slowly():
    """'measured pass^k decays more slowly than p^k for the same average' (Jensen: E[p^k] >= E[p]^k)."""
    rng = random.Random(1)
    for _ in range(200):
        ps = [rng.random() for _ in range(10)]
        mean = sum(ps) / len(ps)
        for k in (2, 4, 8):
            assert sum(p**k for p in ps) / len(ps) >= mean**k - 1e-12


def tau_pass_hat(successes: list[int], n: int, k: int) -> float:
    """τ-bench's estimator (tau_bench/run.py): mean over tasks of C(c, k) / C(n, k)."""
    return sum(math.comb(c, k) / math.comb(n, k) for c in successes) / len(successes)


def test_pass_hat_estimator(bank):
    x = bank.questions["agent-pass-hat-estimator"]
    value = tau_pass_hat([8, 6, 2], 8, 4)
    assert close(x, value)
    assert math.comb(8, 4) == 70 and math.comb(6, 4) == 15 and math.comb(2, 4) == 0
    assert round(15 / 70, 4) == 0.2143
    assert round(value, 4) == 0.4048
    naive = (16 / 24) ** 4
    assert round(naive, 3) == 0.198  # "0.667^4 = 0.198, half the true value"
    assert 0.45 < naive / value < 0.55
    assert math.isclose(tau_pass_hat([8, 6, 2], 8, 1), 16 / 24)  # pass^1 is the plain average


def test_pass_hat_estimator_is_unbiased():
    """E[C(c,k)/C(n,k)] over c ~ Binomial(n, p) equals p^k, exactly (the claim in the answer)."""
    for n, k in ((8, 4), (10, 3), (5, 5)):
        for p in (0.1, 0.5, 0.83):
            expect = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * math.comb(c, k) / math.comb(n, k) for c in range(n + 1))
            assert math.isclose(expect, p**k, rel_tol=1e-12)
            # and the pass@k twin: E[1 - C(n-c,k)/C(n,k)] = 1 - (1-p)^k
            at = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * (1 - math.comb(n - c, k) / math.comb(n, k)) for c in range(n + 1))
            assert math.isclose(at, 1 - (1 - p) ** k, rel_tol=1e-12)


# ------------------------------------------------------- SFT loss masking ---


def test_fc_loss_mask_numeric(bank):
    x = bank.questions["agent-fc-loss-mask-numeric"]
    segments = [
        ("system", 120), ("user", 40), ("assistant", 35), ("tool", 200), ("assistant", 60),
        ("user", 25), ("assistant", 30), ("tool", 150), ("assistant", 45),
    ]
    # build real token ids and labels with ignore_index, as an SFT collator does
    roles = [role for role, n in segments for _ in range(n)]
    ids = torch.arange(len(roles)) % 1000
    labels = torch.where(torch.tensor([r == "assistant" for r in roles]), ids, torch.full_like(ids, -100))
    supervised = int((labels != -100).sum())
    assert close(x, supervised)
    assert len(roles) == 705
    assert round(100 * supervised / len(roles)) == 24  # "about 24%"
    # cross-entropy with ignore_index averages over exactly the supervised tokens
    logits = torch.randn(len(roles), 1000, generator=torch.Generator().manual_seed(0))
    mean = F.cross_entropy(logits, labels, ignore_index=-100)
    total = F.cross_entropy(logits, labels, ignore_index=-100, reduction="sum")
    assert torch.allclose(mean, total / supervised)


# ------------------------------------------------------ ReAct context cost ---


def test_react_context_cost(bank):
    x = bank.questions["agent-react-context-cost"]
    transcript, sent = 2000, 0
    for _ in range(20):
        sent += transcript  # each call re-sends the whole transcript
        transcript += 500  # then the step's thought, call and observation are appended
    assert close(x, sent)
    assert sent == 20 * 2000 + 500 * sum(range(20)) == 40_000 + 500 * 190
    assert 2000 + 19 * 500 == 11_500  # the transcript the last call sees
    # quadratic growth: doubling the steps roughly quadruples the step-dependent part
    part = lambda n: 500 * n * (n - 1) // 2  # noqa: E731
    assert part(40) / part(20) > 4


# --------------------------------------------------------- benchmark noise ---


def test_benchmark_stderr(bank):
    x = bank.questions["agent-benchmark-stderr"]
    se = math.sqrt(0.6 * 0.4 / 500)
    assert close(x, 100 * se)
    assert round(se, 4) == 0.0219
    assert round(1.96 * 100 * se, 1) == 4.3
    assert round(math.sqrt(2) * 100 * se, 1) == 3.1
    # simulation: the spread of a 500-task score at p = 0.6
    g = torch.Generator().manual_seed(0)
    scores = (torch.rand(20_000, 500, generator=g) < 0.6).float().mean(dim=1)
    assert abs(float(scores.std()) - se) < 0.001


# ---------------------------------------------------------- GRPO loss shape ---


def test_rl_advantage_shape(bank):
    x = bank.questions["agent-rl-advantage-shape"]
    B, G, T, V = 2, 3, 7, 11
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(B * G, T, V, generator=g)
    old_logp = torch.randn(B * G, T, generator=g).clamp(max=0)
    tokens = torch.randint(0, V, (B * G, T), generator=g)
    rewards = torch.randint(0, 2, (B, G), generator=g).float()
    adv = ((rewards - rewards.mean(dim=1, keepdim=True)) / (rewards.std(dim=1, keepdim=True) + 1e-6)).reshape(B * G)
    mask = torch.ones(B * G, T)
    mask[:, 2:4] = 0  # a tool result inside each trajectory
    mask[:, -1] = 0  # padding

    logp = F.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    assert logp.shape == (B * G, T)
    ratio = torch.exp(logp - old_logp)
    a = adv[:, None]
    per_token = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a) * mask
    assert tuple(per_token.shape) == shape_of(x.shape, B=B, G=G, T=T)
    assert torch.all(per_token[:, 2:4] == 0) and torch.all(per_token[:, -1] == 0)
    token_level = per_token.sum() / mask.sum()  # DAPO-style: denominator counts only mask-1 tokens
    assert int(mask.sum()) == B * G * (T - 3)
    assert torch.isfinite(token_level)
    # masked tool tokens get no gradient
    logits.requires_grad_(True)
    logp = F.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    (-(logp * a) * mask).sum().backward()
    assert torch.all(logits.grad[:, 2:4] == 0)
