"""Fact checks for questions/gpt-scaling.yaml, alignment.yaml, long-context.yaml and evaluation.yaml.

Every numeric answer is recomputed from first principles, every shape answer is compared
with the shape real torch code produces, and the checkable claims in the prose (6N FLOPs
per token, the DPO gradient weight, the GRPO KL estimator, pass@k unbiasedness, NTK-aware
base scaling, sliding-window reach...) are re-verified numerically. The reference answer
of each question must itself hit every key point's keywords.
"""

from __future__ import annotations

import itertools
import math
import re

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOPICS = {"gpt-scaling": "gpt-", "alignment": "align-", "long-context": "long-", "evaluation": "eval-"}


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of the four topics' original files, by id (newer files may share the topics)."""
    return {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem in TOPICS}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"\d", kw.strip()), (x.id, kw)  # a lone digit matches anything


def test_reference_answers_hit_every_key_point(mine):
    """A good typed answer is matched by keywords; the reference answer must be such an answer, in both languages."""
    for x in mine.values():
        for lang in ("en", "zh"):
            text = getattr(x.answer, lang).lower()
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        mantissa = f"{v / 10 ** math.floor(math.log10(abs(v))):g}" if v else "0"
        shown = {f"{v:g}", f"{v:,.0f}" if v >= 1000 else f"{v:g}", mantissa}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


# Every numeric and shape question must have a check below; adding one without a check fails.
NUMERIC_CHECKED = {
    "gpt-gpt3-param-estimate",
    "gpt-attention-flops-share",
    "gpt-training-flops-chinchilla",
    "gpt-training-time-estimate",
    "gpt-compute-optimal-allocation",
    "align-rm-pairs-count",
    "align-reward-model-loss",
    "align-ppo-memory-estimate",
    "align-dpo-loss-numeric",
    "long-kv-cache-size",
    "long-ntk-base-numeric",
    "long-sliding-window-span",
    "eval-perplexity-definition",
    "eval-ppl-across-tokenizers",
    "eval-pass-at-k-basic",
    "eval-pass-at-k-unbiased",
    "eval-elo-expected-score",
}
SHAPE_CHECKED = {"long-decode-score-shape", "eval-ppl-token-nll-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


def shape_of(text: str, **sizes: int) -> tuple[int, ...]:
    """Evaluate a symbolic shape such as ``[B, H, 1, T+1]`` with concrete sizes."""
    dims = [d.strip() for d in text.strip("[]() ").split(",")]
    env = {k.lower(): v for k, v in sizes.items()}
    return tuple(int(eval(d.lower(), {"__builtins__": {}}, env)) for d in dims)  # noqa: S307 - our own data


# ------------------------------------------------------------- gpt-scaling ---


def gpt_block_params(d: int) -> int:
    """Weight parameters of one GPT block (no biases / norms), built as real modules on the meta device."""
    with torch.device("meta"):
        block = torch.nn.ModuleDict(
            {
                "q": torch.nn.Linear(d, d, bias=False),
                "k": torch.nn.Linear(d, d, bias=False),
                "v": torch.nn.Linear(d, d, bias=False),
                "o": torch.nn.Linear(d, d, bias=False),
                "fc1": torch.nn.Linear(d, 4 * d, bias=False),
                "fc2": torch.nn.Linear(4 * d, d, bias=False),
            }
        )
    return sum(p.numel() for p in block.parameters())


def test_gpt3_param_estimate(bank):
    x = q(bank, "gpt-gpt3-param-estimate")
    n_layer, d, vocab, n_ctx = 96, 12288, 50257, 2048
    assert gpt_block_params(d) == 12 * d * d
    n = n_layer * gpt_block_params(d)
    assert close(x, n / 1e9)
    total = n + vocab * d + n_ctx * d
    assert 174e9 < total < 176e9  # "≈ 174.6B, the 175B in the name"
    assert abs(vocab * d / 1e9 - 0.62) < 0.01


def test_attention_flops_share(bank):
    x = q(bank, "gpt-attention-flops-share")
    n_layer, d, n_ctx = 96, 12288, 2048
    n = 12 * n_layer * d * d
    assert close(x, 100 * (2 * n_layer * n_ctx * d) / (2 * n))
    assert close(x, 100 * n_ctx / (12 * d))
    assert abs(2 * x.value - 2.8) < 0.05  # "the term doubles, to ~2.8 %"
    assert round(131072 / (12 * 4096), 1) == 2.7  # the long-context example


def test_real_forward_flops_match_2n_plus_attention():
    """torch's FLOP counter on a real block: 2N per token for the weights, and 4·n_ctx·d for QKᵀ and AV
    counted in full (the 'Chinchilla accounting' that doubles Kaplan's 2·n_ctx·d term)."""
    from torch.utils.flop_counter import FlopCounterMode

    d, t = 64, 32
    torch.manual_seed(0)
    lin = {n: torch.nn.Linear(d, m * d, bias=False) for n, m in (("qkv", 3), ("o", 1), ("fc1", 4))}
    fc2 = torch.nn.Linear(4 * d, d, bias=False)
    xx = torch.randn(1, t, d)
    with FlopCounterMode(display=False) as counter:
        qq, kk, vv = lin["qkv"](xx).split(d, dim=-1)
        att = torch.softmax(qq @ kk.transpose(-2, -1) / math.sqrt(d), dim=-1) @ vv
        h = lin["o"](att) + xx
        fc2(F.gelu(lin["fc1"](h)))
    n = 12 * d * d
    assert counter.get_total_flops() == t * (2 * n + 4 * t * d)


def test_backward_is_twice_forward():
    """The 6 in 6ND: backward (activation + weight gradients) costs 2x the forward matmuls."""
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256, bias=False), torch.nn.GELU(), torch.nn.Linear(256, 64, bias=False))
    xx = torch.randn(8, 64, requires_grad=True)
    with FlopCounterMode(display=False) as fwd:
        out = mlp(xx).sum()
    with FlopCounterMode(display=False) as bwd:
        out.backward()
    n = sum(p.numel() for p in mlp.parameters())
    assert fwd.get_total_flops() == 2 * n * 8
    assert bwd.get_total_flops() == 2 * fwd.get_total_flops()


def test_training_flops_chinchilla(bank):
    x = q(bank, "gpt-training-flops-chinchilla")
    assert close(x, 6 * 70e9 * 1.4e12)
    gopher, gpt3 = 6 * 280e9 * 300e9, 6 * 175e9 * 300e9
    assert round(gopher / 1e23, 1) == 5.0 and "5.0 × 10²³" in x.answer.en
    assert round(gpt3 / 1e23, 2) == 3.15 and "3.15 × 10²³" in x.answer.en
    assert round(1.4e12 / 300e9, 1) == 4.7  # "~4.7x more tokens"


def test_training_time_estimate(bank):
    x = q(bank, "gpt-training-time-estimate")
    c = 6 * 7e9 * 2e12
    throughput = 1024 * 312e12 * 0.40
    seconds = c / throughput
    assert close(x, seconds / 86400)
    assert round(throughput / 1e17, 2) == 1.28
    assert round(seconds / 1e5, 2) == 6.57
    assert round(c / (312e12 * 0.40) / 3600 / 1e5, 2) == 1.87  # GPU-hours


def test_compute_optimal_allocation(bank):
    x = q(bank, "gpt-compute-optimal-allocation")
    c = 3e23
    n = math.sqrt(c / 120)
    assert close(x, n / 1e9)
    assert math.isclose(6 * n * (20 * n), c)
    assert math.isclose(20 * n, 1e12)
    # "4x the compute buys a 2x larger model"
    assert math.isclose(math.sqrt(4 * c / 120) / n, 2.0)


def test_emergence_mirage_numbers(bank):
    x = q(bank, "gpt-emergence-mirage")
    assert x.correct == 0
    assert round(100 * 0.5**10, 1) == 0.1 and round(100 * 0.9**10) == 35
    assert "0.1 %" in x.choices[0].en and "35 %" in x.choices[0].en
    assert f"{0.9 ** 10:.3f}" in x.answer.en


def test_tokens_per_parameter_claims(bank):
    assert round(1.4e12 / 70e9) == 20  # Chinchilla
    assert round(1e12 / 7e9, -1) == 140  # LLaMA-7B "~140 tokens/param"
    assert round(15e12 / 8e9, -2) == 1900  # Llama 3 8B "~1,900"
    assert "140" in q(bank, "gpt-overtrain-for-inference").answer.en


# --------------------------------------------------------------- alignment ---


def test_rm_pairs_count(bank):
    x = q(bank, "align-rm-pairs-count")
    assert close(x, math.comb(9, 2))
    assert math.comb(4, 2) == 6
    assert len(list(itertools.combinations(range(9), 2))) == x.value


def test_reward_model_loss(bank):
    x = q(bank, "align-reward-model-loss")
    r_w, r_l = torch.tensor(1.5, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64)
    loss = -F.logsigmoid(r_w - r_l).item()
    assert close(x, loss)
    assert math.isclose(loss, math.log1p(math.exp(-1)))
    assert round(-F.logsigmoid(r_l - r_w).item(), 3) == 1.313  # swapped
    assert math.isclose(-F.logsigmoid((r_w + 7) - (r_l + 7)).item(), loss)  # shift-invariant
    assert round(torch.sigmoid(r_w - r_l).item(), 3) == 0.731


def test_ppo_memory_estimate(bank):
    x = q(bank, "align-ppo-memory-estimate")
    n = 7e9
    trained = 2 + 2 + 4 + 4 + 4  # bf16 weights + grads, fp32 master + Adam m, v
    frozen = 2
    assert close(x, (2 * n * trained + 2 * n * frozen) / 1e9)
    assert 2 * n * trained / 1e9 == 224 and 2 * n * frozen / 1e9 == 28
    assert n * (trained + 2 * frozen) / 1e9 == 140  # GRPO: no critic


def dpo_loss(pi_w, pi_l, ref_w, ref_l, beta):
    """The DPO loss as implemented in practice, from sequence log-probabilities."""
    logits = beta * ((pi_w - ref_w) - (pi_l - ref_l))
    return -F.logsigmoid(logits)


def test_dpo_loss_numeric(bank):
    x = q(bank, "align-dpo-loss-numeric")
    ref_w, ref_l = torch.tensor(-40.0, dtype=torch.float64), torch.tensor(-35.0, dtype=torch.float64)
    pi_w = (ref_w + 2.0).requires_grad_()
    pi_l = (ref_l - 3.0).requires_grad_()
    loss = dpo_loss(pi_w, pi_l, ref_w, ref_l, beta=0.1)
    assert close(x, loss.item())
    assert math.isclose(loss.item(), math.log1p(math.exp(-0.5)))
    # at initialisation the loss is log 2
    assert math.isclose(dpo_loss(ref_w, ref_l, ref_w, ref_l, 0.1).item(), math.log(2))
    # gradient weight sigma(r_l - r_w) = sigma(-0.5) ≈ 0.38, times beta
    loss.backward()
    weight = -pi_w.grad.item() / 0.1
    assert math.isclose(weight, 1 / (1 + math.exp(0.5)))
    assert round(weight, 2) == 0.38
    assert math.isclose(pi_l.grad.item(), -pi_w.grad.item())
    # forgetting beta
    assert round(-F.logsigmoid(torch.tensor(5.0, dtype=torch.float64)).item(), 4) == 0.0067


def test_dpo_optimum_and_beta_claims(bank):
    """π* = π_ref·exp(r/β)/Z maximises E[r] − β·KL, and its implicit reward difference recovers r."""
    torch.manual_seed(0)
    ref = torch.softmax(torch.randn(6, dtype=torch.float64), 0)
    r = torch.randn(6, dtype=torch.float64)
    for beta in (0.05, 0.5):
        star = ref * torch.exp(r / beta)
        star = star / star.sum()

        def objective(p, beta=beta):
            return (p * r).sum() - beta * (p * (p / ref).log()).sum()

        for _ in range(20):
            other = torch.softmax(torch.randn(6, dtype=torch.float64), 0)
            assert objective(star) >= objective(other)
        implicit = beta * (star / ref).log()
        diffs = implicit - implicit[0]
        torch.testing.assert_close(diffs, r - r[0])  # log Z cancels in differences
    # smaller beta: the optimum moves further from the reference (larger KL)
    def kl_at(beta):
        star = ref * torch.exp(r / beta)
        star = star / star.sum()
        return (star * (star / ref).log()).sum().item()

    assert kl_at(0.05) > kl_at(0.5)
    assert q(bank, "align-dpo-beta").correct == 0


def test_grpo_kl_estimator_is_unbiased_and_nonnegative():
    torch.manual_seed(0)
    pi = torch.softmax(torch.randn(10, dtype=torch.float64), 0)
    ref = torch.softmax(torch.randn(10, dtype=torch.float64), 0)
    ratio = ref / pi
    k3 = ratio - ratio.log() - 1
    assert (k3 >= 0).all()
    kl = (pi * (pi / ref).log()).sum()
    torch.testing.assert_close((pi * k3).sum(), kl)


def test_grpo_zero_signal_when_rewards_equal():
    rewards = torch.tensor([1.0, 1.0, 1.0, 1.0])
    adv = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    assert torch.all(adv == 0)
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0])
    adv = (rewards - rewards.mean()) / rewards.std()
    assert adv.sum().abs() < 1e-6 and (adv[rewards == 1] > 0).all()


# ------------------------------------------------------------ long-context ---


def test_kv_cache_size(bank):
    """Llama-3-8B at 128k tokens with an FP8 KV cache (torch.float8_e4m3fn is 1 byte per element)."""
    x = q(bank, "long-kv-cache-size")
    layers, kv_heads, head_dim, t = 32, 8, 128, 131072
    with torch.device("meta"):
        k = torch.empty(1, kv_heads, t, head_dim, dtype=torch.float8_e4m3fn)
    per_layer = 2 * k.numel() * k.element_size()
    total = layers * per_layer
    assert close(x, total / 2**30)
    assert total / t == 65536 == 64 * 2**10
    assert round(total / 1e9, 1) == 8.6
    assert total * 2 / 2**30 == 16 and total * 2 * 4 / 2**30 == 64  # BF16, and BF16 with 32 KV heads


def test_decode_score_shape(bank):
    """Beam search: 2 prompts x 4 beams flatten into the batch axis; caches are reordered by parent beam."""
    x = q(bank, "long-decode-score-shape")
    prompts, beams, h, t, d = 2, 4, 32, 20, 16
    torch.manual_seed(0)
    k_cache = torch.randn(prompts * beams, h, t, d)
    qq = torch.randn(prompts * beams, h, 1, d)
    k_all = torch.cat([k_cache, torch.randn(prompts * beams, h, 1, d)], dim=2)
    scores = qq @ k_all.transpose(-2, -1)
    assert tuple(scores.shape) == shape_of(x.shape)
    parents = torch.tensor([0, 0, 2, 1, 4, 5, 5, 7])  # surviving beams' parents, within each prompt's block
    reordered = k_all.index_select(0, parents)
    assert torch.equal(reordered[1], k_all[0]) and reordered.shape == k_all.shape


def test_ntk_base_numeric(bank):
    """The NTK-aware base formula (kept as a claim of pos-ntk-base) and Llama 3's base-500,000 wavelength."""
    x = q(bank, "long-ntk-base-numeric")
    d = 128
    slowest = (500_000.0 ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d))[-1]
    assert close(x, 2 * math.pi / slowest.item() / 1e6)
    assert round(2 * math.pi * 10000 ** (126 / 128), -2) == 54_400
    assert round(500_000 ** (126 / 128)) == 407_309
    b, s = 10000.0, 4.0
    b_new = b * s ** (d / (d - 2))
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = b ** (-2 * i / d)
    theta_new = b_new ** (-2 * i / d)
    assert theta[0] == theta_new[0] == 1.0
    assert math.isclose((theta[-1] / theta_new[-1]).item(), s)
    ratio = theta / theta_new
    assert ((ratio >= 1 - 1e-12) & (ratio <= s + 1e-9)).all() and (ratio.diff() > 0).all()
    # the pitfall: b' = s·b slows the lowest frequency by slightly less than s
    assert (theta[-1] / (s * b) ** (-2 * i[-1] / d)).item() < s
    assert round(s ** (d / (d - 2)), 4) == 4.0890


def test_rope_wavelength_claim():
    """With b = 10,000 and d = 128 the longest RoPE wavelength (~54k positions) exceeds a 4k training context,
    so the lowest-frequency pairs never complete a rotation during training."""
    wavelength = 2 * math.pi * 10000 ** ((128 - 2) / 128)
    assert 54_000 < wavelength < 55_000


def test_sliding_window_span(bank):
    """Gemma 2: half local (window 4096) and half global layers at 8192 tokens; plus the k*W reach claim."""
    x = q(bank, "long-sliding-window-span")
    layers, window, ctx = 42, 4096, 8192
    local = [min(ctx, window)] * (layers // 2)
    global_ = [ctx] * (layers // 2)
    assert close(x, sum(local + global_) / (layers * ctx))
    long_ctx = 1_000_000
    assert (window + long_ctx) / (2 * long_ctx) == pytest.approx(0.5, abs=0.003)  # T >> window: the ratio tends to 1/2
    assert 32 * 4096 == 131_072  # infer-sliding-receptive-field's figure
    # simulate the receptive field: position i attends to [i - w, i] in the previous layer
    w, layers, t = 3, 4, 40
    idx = torch.arange(t)
    band = ((idx[:, None] - idx[None, :]) >= 0) & ((idx[:, None] - idx[None, :]) <= w)
    reach = torch.eye(t, dtype=torch.bool)
    for _ in range(layers):
        reach = (band.float() @ reach.float()) > 0
    farthest = (idx[-1] - idx[reach[-1]].min()).item()
    assert farthest == w * layers


# -------------------------------------------------------------- evaluation ---


def test_perplexity_definition(bank):
    x = q(bank, "eval-perplexity-definition")
    probs = torch.tensor([0.5, 0.25, 0.125, 0.5], dtype=torch.float64)
    # logits whose softmax gives each target exactly its probability over a 9-token vocabulary
    vocab = 9
    logits = torch.empty(4, vocab, dtype=torch.float64)
    targets = torch.zeros(4, dtype=torch.long)
    for row, p in enumerate(probs):
        rest = (1 - p) / (vocab - 1)
        logits[row] = rest.log()
        logits[row, 0] = p.log()
    nll = F.cross_entropy(logits, targets)
    assert math.isclose(nll.item(), 7 * math.log(2) / 4)
    assert close(x, nll.exp().item())
    assert math.isclose(nll.exp().item(), 2 ** 1.75)
    assert math.isclose(nll.exp().item(), 1 / probs.prod().item() ** 0.25)
    # uniform over V gives V
    assert math.isclose(F.cross_entropy(torch.zeros(3, 50), torch.tensor([1, 2, 3])).exp().item(), 50, rel_tol=1e-6)


def test_ppl_token_nll_shape(bank):
    x = q(bank, "eval-ppl-token-nll-shape")
    b, t, v = 3, 7, 11
    torch.manual_seed(0)
    ids = torch.randint(v, (b, t))
    logits = torch.randn(b, t, v)
    nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")
    assert tuple(nll.shape) == shape_of(x.shape, B=b, T=t)
    # corpus perplexity != mean of per-sequence perplexities
    corpus = nll.mean().exp()
    per_seq = nll.mean(-1).exp().mean()
    assert per_seq > corpus


def test_ppl_across_tokenizers(bank):
    x = q(bank, "eval-ppl-across-tokenizers")
    n_bytes = 4000
    a_bits = 1000 * 2.0 / math.log(2)
    b_bits = 1500 * 1.5 / math.log(2)
    assert close(x, a_bits / n_bytes)
    assert round(a_bits) == 2885 and round(b_bits) == 3246
    assert round(b_bits / n_bytes, 3) == 0.812
    assert a_bits < b_bits  # A is the better model despite the worse per-token perplexity
    assert math.exp(2.0) > math.exp(1.5)
    assert round(math.exp(1.5), 1) == 4.5 and round(math.exp(2.0), 1) == 7.4


def pass_at_k(n: int, c: int, k: int) -> float:
    """The Codex paper's numerically stable unbiased estimator."""
    if n - c < k:
        return 1.0
    return 1.0 - float(torch.prod(1.0 - k / torch.arange(n - c + 1, n + 1, dtype=torch.float64)))


def test_pass_at_k_basic(bank):
    x = q(bank, "eval-pass-at-k-basic")
    assert close(x, 1 - math.comb(7, 1) / math.comb(10, 1))
    assert close(x, pass_at_k(10, 3, 1))
    assert close(x, 3 / 10)


def test_pass_at_k_unbiased(bank):
    x = q(bank, "eval-pass-at-k-unbiased")
    n, c, k = 20, 2, 10
    est = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert close(x, est)
    assert math.isclose(pass_at_k(n, c, k), est)
    assert math.comb(18, 10) == 43758 and math.comb(20, 10) == 184756
    assert math.isclose(math.comb(18, 10) / math.comb(20, 10), 90 / 380)
    # brute force: the fraction of k-subsets of the n samples that contain a correct one
    correct = {0, 1}
    hits = sum(bool(correct & set(s)) for s in itertools.combinations(range(n), k))
    assert math.isclose(hits / math.comb(n, k), est)
    # the naive plug-in is lower
    assert round(1 - (1 - c / n) ** k, 3) == 0.651


def test_pass_at_k_estimator_unbiased_and_naive_biased_low():
    n, k = 20, 5
    for p in (0.05, 0.2, 0.5):
        weights = [math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
        unbiased = sum(w * pass_at_k(n, c, k) for c, w in enumerate(weights))
        naive = sum(w * (1 - (1 - c / n) ** k) for c, w in enumerate(weights))
        truth = 1 - (1 - p) ** k
        assert math.isclose(unbiased, truth, rel_tol=1e-9)
        assert naive < truth


def test_elo_expected_score(bank):
    x = q(bank, "eval-elo-expected-score")

    def expected(gap):
        return 1 / (1 + 10 ** (-gap / 400))

    assert close(x, expected(100))
    assert round(expected(200), 2) == 0.76
    assert round(expected(400), 2) == 0.91
    assert round(expected(20), 2) == 0.53
    assert round(10 ** -0.25, 3) == 0.562
    # Bradley–Terry on the Elo scale is the same curve: sigma(ln(10)/400 * gap)
    gap = torch.tensor(100.0, dtype=torch.float64)
    assert math.isclose(torch.sigmoid(gap * math.log(10) / 400).item(), expected(100))


def test_benchmark_facts(bank):
    x = q(bank, "eval-benchmarks-overview")
    assert x.correct == 0
    for fact in ("57 subjects", "164"):
        assert fact in x.choices[0].en
