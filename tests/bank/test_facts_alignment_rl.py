"""Fact checks for questions/alignment-rl.yaml (post-training, deeper: PPO, GRPO and its successors, RL systems).

Every numeric answer is recomputed from first principles (GAE on the toy trajectory, the clipped
surrogate, value clipping, the k1/k2/k3 KL estimators, DAPO's clip-higher cap, dynamic-sampling
odds and overlong penalty, RLOO, the unbiased pass@k estimator, GSPO's sequence ratio, truncated
importance sampling, Gao et al.'s best-of-n peak). The runnable claims in the prose are re-run:
which PPO tokens get zero gradient (with torch autograd), that a ratio of 1 still carries the
REINFORCE gradient, that value clipping can zero the critic's gradient, that k1 and k3 are
unbiased and k3 non-negative, GRPO's length bias and DAPO's token weights, the leave-one-out
identity, the GAE recursion and its λ extremes. The reference answer of each question must hit
every key point in both languages, and every question must cite a source.
"""

from __future__ import annotations

import itertools
import math
import re

import pytest

from drill.practice.answers import matched_key_points

torch = pytest.importorskip("torch")

STEM = "alignment-rl"


@pytest.fixture(scope="module")
def mine(bank):
    return {qid: x for qid, x in bank.questions.items() if bank.origins[qid][0].stem == STEM}


def q(bank, qid):
    return bank.questions[qid]


def close(x, computed):
    """The stored value is within its own tolerance of the recomputed one, and the tolerance is at most 5%."""
    assert x.tolerance <= 0.05 * abs(computed) + 1e-12, (x.id, x.tolerance, computed)
    return abs(x.value - computed) <= x.tolerance + 1e-12


# --------------------------------------------------------------- structure ---


def test_counts_levels_and_types(mine):
    assert len(mine) >= 38
    assert all(qid.startswith("rl-") for qid in mine)
    levels = {lvl: sum(x.level == lvl for x in mine.values()) for lvl in ("L1", "L2", "L3")}
    assert all(levels.values()), levels
    objective = sum(x.type in ("choice", "numeric", "shape") for x in mine.values())
    assert objective / len(mine) >= 0.45, (objective, len(mine))
    assert all(x.topic == "alignment" for x in mine.values())


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        assert any(re.search(r"arXiv:\d{4}\.\d{4,5}|blog|documentation|docs|Sutton", r) for r in x.references), x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 50, (x.id, kw)
                assert not re.fullmatch(r"\d", kw.strip()), (x.id, kw)


def test_reference_answers_hit_every_key_point(mine):
    """Matched exactly as a typed answer is, in each language."""
    for x in mine.values():
        for lang in ("en", "zh"):
            hits = matched_key_points(x, getattr(x.answer, lang))
            assert all(hits), (x.id, lang, hits)
            text = getattr(x.answer, lang).lower()
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_chinese_texts_use_full_width_quotes(mine):
    for x in mine.values():
        texts = [x.prompt.zh, x.answer.zh] + [kp.zh for kp in x.key_points]
        if x.type == "choice":
            texts += [c.zh for c in x.choices]
        for t in texts:
            assert '"' not in t, (x.id, t[:60])


def test_follow_ups_exist(bank, mine):
    for x in mine.values():
        for f in x.follow_ups:
            assert f in bank.questions, (x.id, f)


def test_multi_select_prompts_say_so(mine):
    for x in mine.values():
        if x.type == "choice" and len(x.correct_set) > 1:
            assert "select all that apply" in x.prompt.en and "多选" in x.prompt.zh, x.id


NUMERIC_CHECKED = {
    "rl-ppo-clip-numeric",
    "rl-grpo-advantage-numeric",
    "rl-gae-numeric",
    "rl-value-clip-numeric",
    "rl-kl-k3-numeric",
    "rl-dapo-clip-higher-numeric",
    "rl-dapo-dynamic-sampling-numeric",
    "rl-dapo-overlong-numeric",
    "rl-rloo-numeric",
    "rl-pass-at-k-rl-vs-base",
    "rl-gspo-ratio-numeric",
    "rl-tis-numeric",
    "rl-gao-overopt-numeric",
}


def test_every_numeric_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert not [x.id for x in mine.values() if x.type == "shape"]


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        shown = {f"{x.value:g}", f"{abs(x.value):g}", f"{x.value:.4f}".rstrip("0").rstrip(".")}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


# --------------------------------------------------------------------- PPO ---


def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2):
    return torch.minimum(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)


def test_ppo_clip_numeric(bank):
    x = q(bank, "rl-ppo-clip-numeric")
    value = clipped_surrogate(torch.tensor(1.5), torch.tensor(2.0)).item()
    assert close(x, value)
    # the negative-advantage case quoted in the answer keeps the unclipped, worse value
    assert clipped_surrogate(torch.tensor(1.5), torch.tensor(-2.0)).item() == pytest.approx(-3.0)
    # and the token at r = 1.5, A = 2 contributes no gradient
    logp = torch.tensor(math.log(1.5), requires_grad=True)
    clipped_surrogate(torch.exp(logp - 0.0), torch.tensor(2.0)).backward()
    assert logp.grad.item() == 0.0


def zero_grad(ratio: float, adv: float) -> bool:
    logp = torch.tensor(math.log(ratio), dtype=torch.float64, requires_grad=True)
    clipped_surrogate(torch.exp(logp), torch.tensor(adv, dtype=torch.float64)).backward()
    return logp.grad.item() == 0.0


def test_ppo_clip_zero_grad_choices(bank):
    x = q(bank, "rl-ppo-clip-zero-grad")
    cases = [(1.3, 1.0), (1.3, -1.0), (0.7, -1.0), (0.7, 1.0), (1.0, 1.0)]
    assert {i for i, (r, a) in enumerate(cases) if zero_grad(r, a)} == set(x.correct_set) == {0, 2}
    assert not zero_grad(1.0, -1.0)


def test_ratio_of_one_still_carries_the_reinforce_gradient(bank):
    x = q(bank, "rl-grpo-ratio-one")
    assert x.correct_set == {0}
    torch.manual_seed(0)
    logits = torch.randn(5, dtype=torch.float64, requires_grad=True)
    action, adv = 3, 0.7
    logp = torch.log_softmax(logits, -1)[action]
    ratio = torch.exp(logp - logp.detach())
    assert ratio.item() == 1.0
    (g_ratio,) = torch.autograd.grad(clipped_surrogate(ratio, torch.tensor(adv, dtype=torch.float64)), logits)
    (g_pg,) = torch.autograd.grad(adv * torch.log_softmax(logits, -1)[action], logits)
    assert torch.allclose(g_ratio, g_pg)
    assert g_ratio.abs().sum() > 0


def gae(rewards, values, gamma, lam):
    """Backward recursion A_t = δ_t + γλ A_{t+1}; values has one extra entry for the state after the last token."""
    adv, running = [0.0] * len(rewards), 0.0
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv


def test_gae_numeric_and_extremes(bank):
    x = q(bank, "rl-gae-numeric")
    r, v = [0.0, 0.0, 1.0], [0.4, 0.5, 0.7, 0.0]
    adv = gae(r, v, 1.0, 0.9)
    deltas = [r[t] + v[t + 1] - v[t] for t in range(3)]
    assert deltas == pytest.approx([0.1, 0.2, 0.3])
    assert adv[0] == pytest.approx(sum((0.9**k) * deltas[k] for k in range(3)))  # forward sum = recursion
    assert close(x, adv[0])
    assert adv[1:] == pytest.approx([0.47, 0.3])
    assert [a + b for a, b in zip(adv, v)] == pytest.approx([0.923, 0.97, 1.0])
    assert gae(r, v, 1.0, 0.0)[0] == pytest.approx(0.1)  # one-step TD
    assert gae(r, v, 1.0, 1.0)[0] == pytest.approx(sum(r) - v[0])  # Monte Carlo return minus V
    assert q(bank, "rl-gae-lambda").correct_set == {0}


def test_value_clip_numeric_and_its_zero_gradient(bank):
    x = q(bank, "rl-value-clip-numeric")
    v_old, ret, eps = 0.5, 1.0, 0.2
    v_new = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
    v_clip = v_old + torch.clamp(v_new - v_old, -eps, eps)
    loss = 0.5 * torch.maximum((v_new - ret) ** 2, (v_clip - ret) ** 2)
    loss.backward()
    assert v_clip.item() == pytest.approx(0.7)
    assert close(x, loss.item())
    assert v_new.grad.item() == 0.0  # the clipped branch wins and does not depend on V_new


# ---------------------------------------------------------------------- KL ---


def test_kl_k3_numeric(bank):
    x = q(bank, "rl-kl-k3-numeric")
    logp, logref = -1.0, -1.5
    log_ratio = logref - logp  # log(π_ref / π_θ)
    k1 = logp - logref
    k2 = 0.5 * log_ratio**2
    k3 = math.exp(log_ratio) - log_ratio - 1
    assert close(x, k3)
    assert k1 == pytest.approx(0.5) and k2 == pytest.approx(0.125)


def test_k1_and_k3_are_unbiased_and_k3_is_non_negative():
    """Exact expectations over a categorical π: k1 and k3 average to KL(π‖π_ref), k2 does not; k3 ≥ 0 pointwise."""
    pi = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64)
    ref = torch.tensor([0.25, 0.25, 0.25, 0.25], dtype=torch.float64)
    kl = (pi * (pi / ref).log()).sum()
    lr = (ref / pi).log()
    k1, k2, k3 = -lr, 0.5 * lr**2, lr.exp() - lr - 1
    assert (pi * k1).sum() == pytest.approx(kl.item())
    assert (pi * k3).sum() == pytest.approx(kl.item())
    assert abs((pi * k2).sum().item() - kl.item()) > 1e-3
    assert (k3 >= 0).all() and (k1 < 0).any()


# -------------------------------------------------------------------- GRPO ---


def test_grpo_advantage_numeric(bank):
    x = q(bank, "rl-grpo-advantage-numeric")
    r = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    adv = (r - r.mean()) / r.std()  # torch.std is the unbiased (G − 1) estimate
    assert close(x, adv[0].item())
    assert adv[1].item() == pytest.approx(-0.5)
    assert ((r[0] - r.mean()) / r.std(unbiased=False)).item() == pytest.approx(1.732, abs=1e-3)
    assert (r[0] - r.mean()).item() == pytest.approx(0.75)  # Dr. GRPO


def test_grpo_length_bias_and_dapo_token_weights(bank):
    """GRPO's 1/|o| makes a wrong answer's per-token push-down shrink with its length; DAPO weights every token equally."""
    for qid in ("rl-dr-grpo-biases",):
        assert q(bank, qid).correct_set == {0, 1}
    assert q(bank, "rl-dapo-token-level-loss").correct_set == {0}
    lengths = [200, 2000]
    grpo = [1 / len(lengths) / n for n in lengths]
    dapo = [1 / sum(lengths)] * 2
    assert grpo == pytest.approx([1 / 400, 1 / 4000])
    assert grpo[0] / grpo[1] == pytest.approx(10)
    assert dapo[0] == pytest.approx(1 / 2200)
    assert lengths[1] * dapo[1] / (lengths[0] * dapo[0]) == pytest.approx(10)
    # per-token gradient of a wrong answer (A = −1) on its own log-probs under GRPO's normalisation
    for n in (100, 400):
        logp = torch.zeros(n, dtype=torch.float64, requires_grad=True)
        (-1.0 / n * logp.sum()).backward()
        assert logp.grad[0].item() == pytest.approx(-1.0 / n)


def test_dapo_clip_higher_numeric(bank):
    x = q(bank, "rl-dapo-clip-higher-numeric")
    assert close(x, (1 + 0.28) * 0.01)
    assert (1 + 0.2) * 0.01 == pytest.approx(0.012)
    assert (1 + 0.2) * 0.9 == pytest.approx(1.08)
    # past the decoupled cap 1 + ε_high a positive-advantage token stops receiving gradient
    logp = torch.tensor(math.log(1.29), dtype=torch.float64, requires_grad=True)
    clipped_surrogate(torch.exp(logp), torch.tensor(1.0, dtype=torch.float64), 0.2, 0.28).backward()
    assert logp.grad.item() == 0.0
    logp = torch.tensor(math.log(1.25), dtype=torch.float64, requires_grad=True)
    clipped_surrogate(torch.exp(logp), torch.tensor(1.0, dtype=torch.float64), 0.2, 0.28).backward()
    assert logp.grad.item() > 0.0  # 1.25 < 1.28: still pushed up, where ε = 0.2 would already have stopped it


def test_dapo_dynamic_sampling_numeric(bank):
    x = q(bank, "rl-dapo-dynamic-sampling-numeric")
    assert close(x, 0.9**16 + 0.1**16)


def overlong_penalty(length: int, l_max: int = 20480, l_cache: int = 4096) -> float:
    if length <= l_max - l_cache:
        return 0.0
    if length <= l_max:
        return ((l_max - l_cache) - length) / l_cache
    return -1.0


def test_dapo_overlong_numeric(bank):
    x = q(bank, "rl-dapo-overlong-numeric")
    assert close(x, overlong_penalty(18432))
    assert overlong_penalty(16384) == 0.0 and overlong_penalty(20480) == -1.0 and overlong_penalty(30000) == -1.0


def test_rloo_numeric_and_identity(bank):
    x = q(bank, "rl-rloo-numeric")
    r = [0.8, 0.2, 0.5, 0.1]
    k = len(r)
    loo = [r[i] - (sum(r) - r[i]) / (k - 1) for i in range(k)]
    assert close(x, loo[0])
    mean = sum(r) / k
    assert loo == pytest.approx([k / (k - 1) * (ri - mean) for ri in r])


def pass_at_k(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_rl_vs_base(bank):
    x = q(bank, "rl-pass-at-k-rl-vs-base")
    value = pass_at_k(64, 2, 32)
    assert close(x, value)
    assert math.comb(62, 32) / math.comb(64, 32) == pytest.approx(992 / 4032)
    prod = 1.0 - math.prod(1 - 32 / i for i in range(64 - 2 + 1, 64 + 1))  # the numerically stable product form
    assert prod == pytest.approx(value)


def test_pass_at_k_estimator_is_the_subset_probability():
    """Enumerate every k-subset of n samples: the fraction containing a correct one equals the estimator."""
    n, c, k = 7, 2, 3
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    frac = sum(any(samples[i] for i in s) for s in subsets) / len(subsets)
    assert frac == pytest.approx(pass_at_k(n, c, k))


def test_gspo_ratio_numeric(bank):
    x = q(bank, "rl-gspo-ratio-numeric")
    token_log_ratios = torch.tensor([0.2, -0.1, 0.05, 0.25], dtype=torch.float64)
    s = torch.exp(token_log_ratios.mean())
    geo = torch.exp(token_log_ratios).prod() ** (1 / 4)
    assert s.item() == pytest.approx(geo.item())
    assert close(x, s.item())
    assert math.exp(token_log_ratios.sum().item()) == pytest.approx(1.4918, abs=1e-3)
    assert not (1 - 3e-4 <= s.item() <= 1 + 4e-4)  # outside GSPO's clipping range: clipped


def test_tis_numeric(bank):
    x = q(bank, "rl-tis-numeric")
    pairs = [(0.30, 0.10), (0.45, 0.50), (0.20, 0.25)]
    weights = [min(a / b, 2.0) for a, b in pairs]
    assert weights == pytest.approx([2.0, 0.9, 0.8])
    assert close(x, sum(weights) / 3)
    assert sum(a / b for a, b in pairs) / 3 == pytest.approx(1.567, abs=1e-3)


def test_gao_overoptimization_peak(bank):
    x = q(bank, "rl-gao-overopt-numeric")
    alpha, beta = 1.2, 0.3
    grid = [i / 10000 for i in range(1, 60000)]
    d_star = max(grid, key=lambda d: d * (alpha - beta * d))
    assert d_star == pytest.approx(alpha / (2 * beta), abs=1e-3)
    assert close(x, (alpha / (2 * beta)) ** 2)
    assert alpha**2 / (4 * beta) == pytest.approx(1.2)
    d_rl = max((i / 1000 for i in range(1, 50000)), key=lambda d: d * (alpha - beta * math.log(d)))
    assert d_rl == pytest.approx(math.exp(alpha / beta - 1), rel=1e-3)
    # best-of-n KL = log n − (n−1)/n reaches 4 nats near n ≈ 150
    n = next(n for n in range(2, 1000) if math.log(n) - (n - 1) / n >= 4.0)
    assert 140 <= n <= 160


def test_choice_answers(bank):
    expected = {
        "rl-on-vs-off-policy": {0},
        "rl-rm-vs-value-model": {0},
        "rl-reward-hacking-verifiable": {0, 1, 2},
        "rl-entropy-collapse-signs": {0},
        "rl-colocated-vs-disaggregated": {0, 1, 2},
        "rl-reinforce-pp": {0},
    }
    for qid, correct in expected.items():
        assert set(q(bank, qid).correct_set) == correct, qid
