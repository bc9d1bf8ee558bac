"""Fact checks for questions/decoding.yaml, data.yaml and evaluation-more.yaml.

Every numeric answer is recomputed from first principles (a real beam search, real top-k / min-p /
repetition-penalty filters on tensors, speculative sampling enumerated exactly, MinHash + LSH
simulated on real sets, ECE binned from predictions...), the shape answer is checked by building the
tree attention mask and running attention with it, and the runnable claims in the prose are re-run.
Each reference answer must hit every key point's keywords in its own language.
"""

from __future__ import annotations

import math
import re

import pytest

from drill.practice.answers import _fold_formula

torch = pytest.importorskip("torch")
F = torch.nn.functional

FILES = {"decoding.yaml": "decoding", "data.yaml": "data", "evaluation-more.yaml": "evaluation"}
MINIMUM = {"decoding.yaml": 24, "data.yaml": 16, "evaluation-more.yaml": 8}


@pytest.fixture(scope="module")
def mine(bank):
    """This module's questions, by file name, then id."""
    out: dict[str, dict] = {name: {} for name in FILES}
    for qid, (path, _) in bank.origins.items():
        if path.name in FILES:
            out[path.name][qid] = bank.questions[qid]
    return out


@pytest.fixture(scope="module")
def every(mine):
    return {qid: q for group in mine.values() for qid, q in group.items()}


def close(q, computed: float) -> bool:
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q.tolerance <= max(0.02 * abs(computed), 1e-9), (q.id, q.tolerance, computed)
    return abs(q.value - computed) <= q.tolerance + 1e-9 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_sizes_levels_topics_and_objective_share(mine):
    for name, topic in FILES.items():
        qs = list(mine[name].values())
        assert len(qs) >= MINIMUM[name], name
        assert {q.topic for q in qs} == {topic}, name
        assert {q.level for q in qs} == {"L1", "L2", "L3"}, name
        if name != "evaluation-more.yaml":  # the new topics; evaluation-more deepens an existing one
            assert sum(q.objective for q in qs) / len(qs) >= 0.45, name


def test_each_new_topic_has_one_sixty_second_pitch(mine):
    for name, prefix in (("decoding.yaml", "dec"), ("data.yaml", "data")):
        pitches = [q for q in mine[name].values() if "pitch" in q.tags]
        assert [q.id for q in pitches] == [f"{prefix}-pitch"], name
        q = pitches[0]
        assert q.type == "open" and q.level == "L2" and q.time_limit == 60
        assert 100 <= len(q.answer.en.split()) <= 180, q.id


def test_interviewer_chains_l1_l2_l3(mine, bank):
    qs = bank.questions
    for name in FILES:
        paths = {
            (a.id, b, c)
            for a in mine[name].values() if a.level == "L1"
            for b in a.follow_ups if qs[b].level == "L2"
            for c in qs[b].follow_ups if qs[c].level == "L3"
        }
        assert len(paths) >= 3, name


def test_references_keywords_and_reference_answers(every):
    for q in every.values():
        assert q.references, q.id
        assert any(re.search(r"§|Appendix|Table|Figure|docs|source|blog|Nature|\(\w+ \d{4}|\d{4}\)", r) for r in q.references), q.id
        assert 2 <= len(q.key_points) <= 5, q.id
        for lang in ("en", "zh"):
            answer = _fold_formula(getattr(q.answer, lang))
            for i, kp in enumerate(q.key_points):
                words = getattr(kp.keywords, lang)
                for w in words:
                    assert w.strip() and len(w) <= 40, (q.id, w)
                    assert not re.fullmatch(r"\d", w.strip()), (q.id, w)
                assert any(_fold_formula(w) in answer for w in words), (q.id, lang, i, words)


def test_numeric_answers_show_their_value(every):
    for q in every.values():
        if q.type != "numeric":
            continue
        shown = {f"{q.value:g}", f"{q.value:,.0f}", f"{q.value:.2f}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(q.answer, lang) for s in shown), (q.id, lang, shown)


def test_multi_select_prompts_say_so(every):
    for q in every.values():
        if q.type == "choice" and isinstance(q.correct, list):
            assert "select all that apply" in q.prompt.en.lower() and "多选" in q.prompt.zh, q.id


NUMERIC_CHECKED = {
    "dec-beam-vs-greedy-prob", "dec-top-k-numeric", "dec-temperature-numeric", "dec-spec-greedy-accept-count",
    "dec-min-p-numeric", "dec-repetition-penalty-numeric", "dec-freq-presence-numeric",
    "dec-spec-expected-tokens", "dec-spec-acceptance-rate", "dec-spec-walltime", "dec-spec-optimal-gamma",
    "data-jaccard-numeric", "data-epochs-numeric", "data-lsh-s-curve", "data-temperature-sampling",
    "data-lsh-threshold",
    "eval-accuracy-stderr", "eval-ece-numeric", "eval-ifeval-numeric", "eval-mcnemar-numeric",
    "eval-sample-size-numeric",
}
SHAPE_CHECKED = {"dec-tree-attention-mask"}


def test_every_numeric_and_shape_question_is_checked(every):
    assert {q.id for q in every.values() if q.type == "numeric"} == NUMERIC_CHECKED
    assert {q.id for q in every.values() if q.type == "shape"} == SHAPE_CHECKED


# --------------------------------------------------------- greedy and beam ---

# The toy model of dec-beam-vs-greedy-prob: P(next | prefix) for two steps.
TOY = {(): {"A": 0.6, "B": 0.4}, ("A",): {"x": 0.3, "y": 0.3, "z": 0.3, "w": 0.1}, ("B",): {"x": 0.9, "y": 0.1}}


def beam_search(width: int, steps: int = 2):
    beams = [((), 0.0)]
    for _ in range(steps):
        cand = [(p + (t,), s + math.log(pr)) for p, s in beams for t, pr in TOY[p].items()]
        beams = sorted(cand, key=lambda c: c[1], reverse=True)[:width]
    return beams[0]


def test_beam_vs_greedy(every):
    greedy_seq, greedy_logp = beam_search(1)
    beam_seq, beam_logp = beam_search(2)
    assert greedy_seq[0] == "A" and math.isclose(math.exp(greedy_logp), 0.18)
    assert beam_seq[0] == "B" and math.isclose(math.exp(beam_logp), 0.36)
    assert close(every["dec-beam-vs-greedy-prob"], math.exp(beam_logp))


def test_beam_basics_and_length_penalty(every):
    q = every["dec-beam-basics"]
    assert q.correct == 0
    # Hugging Face ranks finished beams by sum_logprobs / len ** length_penalty.
    def winner(alpha):
        scores = {"A": -4.0 / 4**alpha, "B": -6.4 / 8**alpha}
        return max(scores, key=scores.get)

    assert (winner(0.0), winner(1.0)) == ("A", "B")
    assert every["dec-beam-length-penalty"].correct == 0
    assert math.isclose(-6.4 / 8, -0.8)


# ---------------------------------------------------------------- sampling ---


def test_top_k(every):
    probs = torch.tensor([0.40, 0.25, 0.15, 0.10, 0.06, 0.04], dtype=torch.float64)
    logits = probs.log()
    kth = logits.topk(3).values[-1]
    kept = F.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)
    assert close(every["dec-top-k-numeric"], kept[1].item())


def test_temperature(every):
    p = F.softmax(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64) / 0.5, dim=-1)
    assert close(every["dec-temperature-numeric"], p[0].item())
    p1 = F.softmax(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64), dim=-1)
    assert round(p1[0].item(), 3) == 0.665


def min_p_filter(probs: torch.Tensor, min_p: float) -> torch.Tensor:
    """Hugging Face's MinPLogitsWarper rule: remove tokens with p < min_p * p_max, then renormalise."""
    keep = probs >= min_p * probs.max()
    out = probs * keep
    return out / out.sum()


def test_min_p(every):
    probs = torch.tensor([0.50, 0.25, 0.12, 0.08, 0.05], dtype=torch.float64)
    kept = min_p_filter(probs, 0.2)
    assert (kept > 0).sum().item() == 3
    assert close(every["dec-min-p-numeric"], kept[2].item())
    # Using 0.2 itself as the threshold (the pitfall) keeps only two tokens.
    assert (probs >= 0.2).sum().item() == 2


def test_min_p_is_a_logit_window_and_top_p_grows_with_temperature():
    """dec-min-p-high-temp: p_i >= p_base * p_max  <=>  z_i >= z_max - tau * ln(1/p_base)."""
    g = torch.Generator().manual_seed(0)
    vocab = 50_000
    # A peaked head and a long tail, like an LM's next-token logits.
    z = torch.cat([torch.tensor([8.0, 7.0, 6.5]), torch.randn(vocab - 3, generator=g, dtype=torch.float32)]).double()
    p_base = 0.1
    counts = {}
    for tau in (1.0, 2.0):
        probs = F.softmax(z / tau, dim=-1)
        by_prob = probs >= p_base * probs.max()
        by_logit = z >= z.max() - tau * math.log(1 / p_base)
        assert torch.equal(by_prob, by_logit)
        sorted_p = probs.sort(descending=True).values
        nucleus = int((sorted_p.cumsum(0) < 0.9).sum().item()) + 1
        counts[tau] = (int(by_prob.sum().item()), nucleus)
    # Min-p keeps a handful of tokens; top-p's nucleus explodes into the tail at high temperature.
    assert counts[1.0][0] == 3 and counts[2.0][0] < 50
    assert counts[2.0][1] > 1000 and counts[2.0][1] > 100 * counts[2.0][0]
    assert (round(math.log(10), 1), round(2 * math.log(10), 1)) == (2.3, 4.6)  # the window widths quoted


def repetition_penalty(scores: torch.Tensor, input_ids: torch.Tensor, penalty: float) -> torch.Tensor:
    """Hugging Face's RepetitionPenaltyLogitsProcessor, written out."""
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


def test_repetition_penalty(every):
    scores = torch.tensor([[3.0, 2.7, -1.0]], dtype=torch.float64)
    once = repetition_penalty(scores, torch.tensor([[0, 2]]), 1.2)
    thrice = repetition_penalty(scores, torch.tensor([[0, 0, 2, 0]]), 1.2)  # repeats do not compound
    assert torch.allclose(once, torch.tensor([[2.5, 2.7, -1.2]], dtype=torch.float64))
    assert torch.equal(once, thrice)
    p = F.softmax(once, dim=-1)[0]
    assert scores.argmax().item() == 0 and p.argmax().item() == 1
    assert close(every["dec-repetition-penalty-numeric"], p[1].item())
    assert round(-1.0 / 1.2, 2) == -0.83  # the "always divide" pitfall raises a negative logit


def test_frequency_presence_penalty(every):
    mu, count, a_freq, a_pres = 4.0, 3, 0.5, 0.6
    adjusted = mu - count * a_freq - float(count > 0) * a_pres
    assert close(every["dec-freq-presence-numeric"], adjusted)
    assert round(math.exp(-(mu - adjusted)), 2) == 0.12


def test_filter_order_matters():
    """dec-logits-processor-order: temperature before top-p changes the nucleus."""
    z = torch.tensor([3.0, 2.0, 1.5, 1.0, 0.5, 0.0], dtype=torch.float64)

    def nucleus(tau, p=0.9):
        sp = F.softmax(z / tau, dim=-1).sort(descending=True).values
        return int((sp.cumsum(0) < p).sum().item()) + 1

    assert nucleus(0.7) < nucleus(1.5)


# ----------------------------------------------------------- speculative ---


def greedy_verify(draft: list[str], target_argmax: list[str]) -> list[str]:
    """Accept the matching prefix, then append the target's token (or the bonus token if all match)."""
    out = []
    for d, t in zip(draft, target_argmax):
        if d != t:
            return out + [t]
        out.append(d)
    return out + [target_argmax[len(draft)]]


def test_greedy_verification_count(every):
    emitted = greedy_verify(list("abcd"), ["a", "b", "x", "d", "e"])
    assert emitted == ["a", "b", "x"]
    assert close(every["dec-spec-greedy-accept-count"], len(emitted))
    assert len(greedy_verify(list("abcd"), list("abcde"))) == 5  # the gamma + 1 ceiling


def expected_tokens(alpha: float, gamma: int) -> float:
    """Sum over how many draft tokens are accepted, each outcome giving accepted + 1 tokens."""
    total = 0.0
    for k in range(gamma + 1):
        p_k = alpha**k * ((1 - alpha) if k < gamma else 1.0)
        total += p_k * (k + 1)
    return total


def test_spec_expected_tokens_and_walltime(every):
    e = expected_tokens(0.8, 4)
    assert math.isclose(e, (1 - 0.8**5) / (1 - 0.8))
    assert close(every["dec-spec-expected-tokens"], e)
    assert round(4 * 0.8, 1) == 3.2  # the gamma * alpha pitfall
    g = torch.Generator().manual_seed(0)  # and a simulation of the accept-until-first-reject process
    accepted = (torch.rand(200_000, 4, generator=g, dtype=torch.float64) < 0.8).int().cumprod(dim=1).sum(dim=1)
    assert abs((accepted + 1).double().mean().item() - e) < 0.02
    assert close(every["dec-spec-walltime"], e / (4 * 0.05 + 1))


def test_spec_optimal_gamma(every):
    def factor(gamma, alpha=0.8, c=0.05):
        return (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))

    best = max(range(1, 60), key=factor)
    assert close(every["dec-spec-optimal-gamma"], best)
    assert round(factor(8), 3) == 3.092 and round(factor(7), 3) == 3.082 and round(factor(9), 3) == 3.078
    assert all(factor(g) >= 0.98 * factor(best) for g in range(6, 11))


def speculative_output_distribution(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Exact distribution of one speculative-sampling step: accept x~q w.p. min(1, p/q), else resample."""
    accept = torch.minimum(torch.ones_like(p), p / q)
    residual = torch.clamp(p - q, min=0)
    residual = residual / residual.sum() if residual.sum() > 0 else residual
    return q * accept + (1 - (q * accept).sum()) * residual


def test_spec_acceptance_rate_and_exactness(every):
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    q = torch.tensor([0.3, 0.5, 0.2], dtype=torch.float64)
    alpha = torch.minimum(p, q).sum().item()
    assert math.isclose(alpha, 1 - 0.5 * (p - q).abs().sum().item())
    assert close(every["dec-spec-acceptance-rate"], alpha)
    assert torch.allclose(speculative_output_distribution(p, q), p)
    assert round((p * q).sum().item(), 2) == 0.34  # the dot-product pitfall
    g = torch.Generator().manual_seed(1)
    for _ in range(50):  # lossless for arbitrary draft/target pairs
        p = torch.rand(7, generator=g, dtype=torch.float64).softmax(0)
        q = (3 * torch.rand(7, generator=g, dtype=torch.float64)).softmax(0)
        assert torch.allclose(speculative_output_distribution(p, q), p)
    assert every["dec-lossless-methods"].correct == [0, 1, 4]


def test_tree_attention_mask_shape_and_semantics(every):
    """8 tree nodes (2 at depth 1, 3 children each) over T cached tokens: the mask is [8, T+8]."""
    T, d = 5, 16
    parent = [-1, -1, 0, 0, 0, 1, 1, 1]
    depth = [0 if p < 0 else 1 for p in parent]
    n = len(parent)
    tree = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        j = i
        while j >= 0:
            tree[i, j] = True
            j = parent[j]
    mask = torch.cat([torch.ones(n, T, dtype=torch.bool), tree], dim=1)
    shape = tuple(int(eval(x, {"__builtins__": {}}, {"t": T})) for x in every["dec-tree-attention-mask"].shape.lower().strip("[]").split(","))  # noqa: S307
    assert tuple(mask.shape) == shape == (8, T + 8)
    assert [int(r) for r in mask.sum(1)] == [T + 1 + dd for dd in depth]
    # Attention with the tree mask equals causal attention along each node's own path.
    g = torch.Generator().manual_seed(0)
    k = torch.randn(T + n, d, generator=g, dtype=torch.float64)
    v = torch.randn(T + n, d, generator=g, dtype=torch.float64)
    qn = torch.randn(n, d, generator=g, dtype=torch.float64)
    out = F.scaled_dot_product_attention(qn[None], k[None], v[None], attn_mask=mask[None])[0]
    for i in range(n):
        path = list(range(T)) + [T + j for j in range(n) if tree[i, j]]
        ref = F.scaled_dot_product_attention(qn[None, i : i + 1], k[None, path], v[None, path])[0, 0]
        assert torch.allclose(out[i], ref)
    positions = [T + dd for dd in depth]
    assert positions[:2] == [T, T] and set(positions[2:]) == {T + 1}


def test_float_addition_is_not_associative():
    """dec-nondeterminism: reduction order changes the result in floating point."""
    assert (0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1 << 16, generator=g, dtype=torch.float32)
    chunked = torch.stack([c.sum() for c in x.split(1000)]).sum()
    pairwise = x.view(256, 256).sum(0).sum()
    assert chunked.item() != pairwise.item()


# ------------------------------------------------------------------- data ---


def test_jaccard_and_containment(every):
    a, b = set(range(80)), set(range(20, 120))
    assert (len(a), len(b), len(a & b)) == (80, 100, 60)
    assert close(every["data-jaccard-numeric"], len(a & b) / len(a | b))
    assert len(a & b) / len(a) == 0.75


def test_epochs(every):
    assert close(every["data-epochs-numeric"], 7e9 * 20 / 35e9)


def s_curve(s: float, b: int, r: int) -> float:
    return 1 - (1 - s**r) ** b


def test_lsh_s_curve_formula_and_simulation(every):
    assert close(every["data-lsh-s-curve"], s_curve(0.75, 14, 8))
    assert [round(s_curve(s, 14, 8), 3) for s in (0.7, 0.8, 0.5)] == [0.565, 0.924, 0.053]
    assert round(0.75**8, 4) == 0.1001 and round((1 - 0.75**8) ** 14, 4) == 0.2284
    # Real MinHash on real sets: |A| = |B| = 105, |A & B| = 90, |A | B| = 120, so J = 0.75.
    union = torch.arange(120)
    in_a, in_b = union < 105, union >= 15
    g = torch.Generator().manual_seed(0)
    hashes = torch.rand(1000, 112, 120, generator=g)  # 112 random hash values per shingle, per trial
    inf = torch.tensor(float("inf"))
    min_a = torch.where(in_a, hashes, inf).argmin(-1)
    min_b = torch.where(in_b, hashes, inf).argmin(-1)
    agree = min_a == min_b
    assert abs(agree.double().mean().item() - 0.75) < 0.01  # data-minhash-prob: P[equal minhash] = Jaccard
    flagged = agree.view(1000, 14, 8).all(-1).any(-1).double().mean().item()
    assert abs(flagged - s_curve(0.75, 14, 8)) < 0.05
    assert every["data-minhash-prob"].correct == 0
    assert round(math.sqrt(0.8 * 0.2 / 128), 3) == 0.035


def test_lsh_threshold(every):
    thr = (1 / 14) ** (1 / 8)
    assert close(every["data-lsh-threshold"], thr)
    assert round(s_curve(thr, 14, 8), 2) == 0.65 and round(1 - 1 / math.e, 2) == 0.63
    assert s_curve(0.7, 14, 8) > 0.5
    # Lee et al.'s 9,000 hashes as 450 bands of 20 rows.
    assert round(s_curve(0.75, 450, 20), 2) == 0.76 and round(s_curve(0.8, 450, 20), 3) == 0.995
    assert round(9000 / 112) == 80


def test_temperature_sampling_of_languages(every):
    w = torch.tensor([0.9, 0.1], dtype=torch.float64) ** 0.3
    assert close(every["data-temperature-sampling"], (w / w.sum())[1].item())
    assert round(w[0].item(), 4) == 0.9689 and round(w[1].item(), 4) == 0.5012


def test_gpt3_mixture_figures_are_consistent():
    """data-mixture-choice: Common Crawl 410B tokens x 0.44 epochs is ~60% of a 300B-token run."""
    assert abs(410e9 * 0.44 / 300e9 - 0.60) < 0.01


def test_gopher_choice(every):
    assert every["data-gopher-heuristics"].correct == [0, 1, 2]
    assert every["data-model-collapse"].correct == 0 and every["data-repeat-epochs"].correct == 0


# ------------------------------------------------------------- evaluation ---


def test_accuracy_standard_error(every):
    se = math.sqrt(0.7 * 0.3 / 1000)
    assert close(every["eval-accuracy-stderr"], 100 * se)
    assert round(100 * 1.96 * se, 1) == 2.8


def expected_calibration_error(conf: torch.Tensor, correct: torch.Tensor, bins: int = 10) -> float:
    edges = torch.linspace(0, 1, bins + 1, dtype=torch.float64)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (conf > lo) & (conf <= hi)
        if sel.any():
            ece += sel.double().mean().item() * abs(correct[sel].double().mean().item() - conf[sel].mean().item())
    return ece


def test_ece(every):
    conf = torch.tensor([0.9] * 40 + [0.6] * 60, dtype=torch.float64)
    correct = torch.tensor([1] * 32 + [0] * 8 + [1] * 39 + [0] * 21)
    ece = expected_calibration_error(conf, correct)
    assert close(every["eval-ece-numeric"], ece)
    assert round(0.4 * -0.10 + 0.6 * 0.05, 2) == -0.01  # the signed-gap pitfall


def test_temperature_scaling_keeps_the_argmax():
    g = torch.Generator().manual_seed(0)
    logits = 5 * torch.randn(1000, 4, generator=g)
    for t in (0.5, 1.7, 3.0):
        assert torch.equal((logits / t).argmax(-1), logits.argmax(-1))


def test_ifeval_levels(every):
    followed, total = [2, 2, 1, 0], [2, 3, 1, 2]
    assert close(every["eval-ifeval-numeric"], sum(followed) / sum(total))
    assert sum(f == t for f, t in zip(followed, total)) / len(total) == 0.5
    assert round(sum(f / t for f, t in zip(followed, total)) / 4, 3) == 0.667


def chi2_1df_sf(x: float) -> float:
    return math.erfc(math.sqrt(x / 2))


def test_mcnemar(every):
    b, c = 60, 40
    stat = (b - c) ** 2 / (b + c)
    assert close(every["eval-mcnemar-numeric"], stat)
    assert round(chi2_1df_sf(stat), 3) == 0.046
    corrected = (abs(b - c) - 1) ** 2 / (b + c)
    assert corrected == 3.61 and round(chi2_1df_sf(corrected), 3) == 0.057
    exact = 2 * sum(math.comb(b + c, k) for k in range(b, b + c + 1)) / 2 ** (b + c)
    assert round(exact, 3) == 0.057


def test_sample_size(every):
    worst = max(p * (1 - p) for p in [i / 1000 for i in range(1001)])
    assert worst == 0.25
    assert close(every["eval-sample-size-numeric"], math.ceil(worst / 0.01**2))
    assert round(math.ceil(2 * worst / 0.01**2), -3) == 5000


def test_paired_analysis_figures():
    single = math.sqrt(0.8 * 0.2 / 1319)
    assert round(100 * single, 1) == 1.1 and round(100 * math.sqrt(2) * single, 2) == 1.56
    # Pairing removes shared difficulty: correlated per-question scores give a much smaller SE.
    g = torch.Generator().manual_seed(0)
    a = (torch.rand(1319, generator=g, dtype=torch.float64) < 0.8).double()  # model A right on ~80%
    b = torch.where(torch.rand(1319, generator=g, dtype=torch.float64) < 0.1, 1 - a, a)  # B flips 10% of them
    paired = (b - a).std().item() / math.sqrt(1319)
    unpaired = math.sqrt(a.var().item() / 1319 + b.var().item() / 1319)
    assert paired < 0.7 * unpaired


def test_choice_keys(every):
    for qid in ("eval-calibration-what", "eval-truthfulqa", "eval-simpleqa"):
        assert every[qid].correct == 0, qid
    assert every["dec-constrained-facts"].correct == [0, 2, 4]
    assert every["dec-logits-processor-order"].correct == 0
    assert every["data-exact-vs-near"].correct == 1 and every["data-perplexity-filter"].correct == 0
