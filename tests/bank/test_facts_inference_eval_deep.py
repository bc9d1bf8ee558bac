"""Fact checks for questions/inference-eval-deep.yaml (ids ``ie-*``: inference, quantization, evaluation).

Every numeric answer is recomputed from first principles (roofline ridge and intensities, decode and
prefill floors, MoE expert coverage, FP8 / FP4 / microscaling encodings, BLEU, ROUGE-L, perplexity,
pass@k, Bradley-Terry gaps, win-rate and accuracy standard errors), FLOP counts come from torch's own
FLOP counter on real tensors, FP formats are decoded bit by bit and compared with torch's float8 types,
and the checkable side claims in the prose are re-run. The file's shape (counts, levels, objective
share) is checked, every question has a primary reference, and each reference answer hits every key
point with its own keywords in both languages.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOPICS = ("inference", "quantization", "evaluation")


@pytest.fixture(scope="module")
def mine(bank):
    return {
        qid: q
        for qid, q in bank.questions.items()
        if qid.startswith("ie-") and bank.origins[qid][0].stem == "inference-eval-deep"
    }


def q(mine, qid):
    return mine[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-9 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_file_shape(mine):
    assert len(mine) >= 32
    levels = Counter(x.level for x in mine.values())
    assert levels["L1"] >= 8 and levels["L2"] >= 12 and levels["L3"] >= 9, levels
    objective = sum(x.type in ("choice", "numeric", "shape") for x in mine.values())
    assert objective >= 0.5 * len(mine)
    for topic in TOPICS:
        assert {x.level for x in mine.values() if x.topic == topic} == {"L1", "L2", "L3"}, topic


def test_key_points_references_and_keywords(mine):
    primary = re.compile(r"arXiv:\d{4}\.\d{4,5}|\((?:ACL|SOSP|OSDI|ICML|ICLR|NeurIPS|MLSys|JMLR|EMNLP|COLM)|"
                         r"Communications of the ACM|datasheet|Specification|Model Card|Technical Blog|"
                         r"documentation|JASA|Biometrika|IEEE 754", re.I)
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        assert any(primary.search(r) for r in x.references), (x.id, x.references)
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[\d.,%]+", kw.strip()), (x.id, kw)


def test_reference_answers_hit_every_key_point(mine):
    """The reference answer must tick each key point with that language's own keywords."""
    for x in mine.values():
        for lang in ("en", "zh"):
            text = getattr(x.answer, lang).lower()
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_choice_questions_are_well_formed(mine):
    for x in mine.values():
        if x.type != "choice":
            continue
        assert 3 <= len(x.choices) <= 5, x.id
        correct = x.correct if isinstance(x.correct, list) else [x.correct]
        assert all(0 <= c < len(x.choices) for c in correct), x.id
        multi = isinstance(x.correct, list) and len(x.correct) > 1
        says_multi = "select all that apply" in x.prompt.en and "多选" in x.prompt.zh
        assert multi == says_multi, x.id
        letters = "ABCDE"
        for lang, fmt in (("en", "**{}"), ("zh", "**选 {}")):
            assert fmt.format(letters[correct[0]]) in getattr(x.answer, lang), (x.id, lang)


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        shown = {f"{v:g}", f"{v:,.0f}", f"{v:.2f}", f"{v:.1f}", f"{v:.3f}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


NUMERIC_CHECKED = {
    "ie-h100-ridge-point",
    "ie-linear-layer-intensity",
    "ie-prefill-time-floor",
    "ie-decode-step-floor-with-kv",
    "ie-gqa-decode-attention-intensity",
    "ie-moe-experts-touched",
    "ie-fp8-e5m2-max",
    "ie-mxfp4-bits-per-element",
    "ie-nvfp4-bits-per-element",
    "ie-mx-quantize-clamp",
    "ie-bleu-toy",
    "ie-rouge-l-lcs",
    "ie-corpus-perplexity",
    "ie-pass-at-k-benchmark-mean",
    "ie-elo-gap-from-win-rate",
    "ie-win-rate-ties-ci",
    "ie-aime-score-noise",
}


def test_every_numeric_question_has_a_check(mine):
    assert {x.id for x in mine.values() if x.type in ("numeric", "shape")} == NUMERIC_CHECKED


# --------------------------------------------------------------- inference ---

H100_BF16 = 989e12  # dense BF16 tensor-core FLOP/s (the datasheet's 1,979 is with 2:4 sparsity)
H100_BW = 3.35e12  # HBM3 bytes/s


def test_h100_ridge_point(mine):
    assert close(q(mine, "ie-h100-ridge-point"), H100_BF16 / H100_BW)
    assert 1979 / 2 == pytest.approx(989, abs=1)  # dense is half the sparse headline
    # batch-1 BF16 decode: 2 FLOPs per parameter, 2 bytes per parameter
    assert 2 / 2 == 1


def test_linear_layer_intensity_with_flop_counter(mine):
    from torch.utils.flop_counter import FlopCounterMode

    d, b = 8192, 64
    w = torch.empty(d, d, dtype=torch.bfloat16, device="meta")
    x = torch.empty(b, d, dtype=torch.bfloat16, device="meta")
    with FlopCounterMode(display=False) as counter:
        y = F.linear(x, w)
    flops = counter.get_total_flops()
    nbytes = sum(t.numel() * t.element_size() for t in (w, x, y))
    assert flops == 8_589_934_592 and nbytes == 136_314_880
    assert close(q(mine, "ie-linear-layer-intensity"), flops / nbytes)
    # intensity ~ batch size: batch 1 gives about 1 FLOP/byte
    assert 2 * d * d / (2 * d * d + 4 * d) == pytest.approx(1, abs=0.01)


def test_prefill_time_floor(mine):
    flops = 2 * 70e9 * 4000
    assert flops == pytest.approx(5.6e14)
    delivered = 4 * H100_BF16 * 0.5
    assert delivered == pytest.approx(1.978e15)
    assert close(q(mine, "ie-prefill-time-floor"), flops / delivered * 1e3)
    assert 32000 / 4000 == 8


def test_decode_step_floor_with_kv(mine):
    per_token = torch.empty(2, 80, 8, 128, dtype=torch.bfloat16, device="meta")  # K and V, layers, kv heads, dim
    kv_tok = per_token.numel() * per_token.element_size()
    assert kv_tok == 327_680 == 320 * 1024
    kv = 32 * 4096 * kv_tok
    assert kv == 42_949_672_960
    total = 70e9 + kv
    t = total / (4 * H100_BW)
    assert close(q(mine, "ie-decode-step-floor-with-kv"), t * 1e3)
    assert round(1 / t) == 119  # tokens/s per sequence at best
    assert 0.37 < kv / total < 0.40  # "almost 40% of the bytes"
    assert 8 % 4 == 0 and 8 // 4 == 2  # 2 of the 8 KV heads per GPU


def test_gqa_decode_attention_intensity_with_flop_counter(mine):
    from torch.utils.flop_counter import FlopCounterMode

    group, dh, cached = 64 // 8, 128, 1000
    qq = torch.empty(1, group, 1, dh, dtype=torch.bfloat16, device="meta")  # 8 query heads of one KV group
    k = torch.empty(1, 1, cached, dh, dtype=torch.bfloat16, device="meta")
    v = torch.empty(1, 1, cached, dh, dtype=torch.bfloat16, device="meta")
    with FlopCounterMode(display=False) as counter:
        p = qq @ k.transpose(-2, -1)
        p @ v
    flops = counter.get_total_flops()
    nbytes = (k.numel() + v.numel()) * k.element_size()
    assert flops / cached == 4096 and nbytes / cached == 512
    assert close(q(mine, "ie-gqa-decode-attention-intensity"), flops / nbytes)
    # plain MHA: one query head per KV head -> 1 FLOP/byte; batch does not change a sequence's ratio
    assert (4 * dh) / (2 * dh * 2) == 1


def test_moe_experts_touched(mine):
    e, k, b = 256, 8, 64
    frac = 1 - (1 - k / e) ** b
    assert (1 - k / e) == 31 / 32
    assert math.isclose((31 / 32) ** 64, math.exp(64 * math.log(31 / 32)))
    assert round(64 * math.log(31 / 32), 3) == -2.032 and round((31 / 32) ** 64, 3) == 0.131
    assert close(q(mine, "ie-moe-experts-touched"), 100 * frac)
    # Monte Carlo with real top-8-of-256 routing on random (uniform) router scores
    g = torch.Generator().manual_seed(0)
    trials = 2000
    scores = torch.rand(trials, b, e, generator=g)
    chosen = scores.topk(k, dim=-1).indices  # [trials, b, k], distinct experts per token
    touched = torch.zeros(trials, e, dtype=torch.bool)
    touched.scatter_(1, chosen.reshape(trials, -1), True)
    assert touched.float().mean().item() == pytest.approx(frac, abs=0.003)
    assert round(100 * k / e, 1) == 3.1 and b * k / e == 2


# ------------------------------------------------------------ quantization ---


def fp_values(ebits, mbits, bias, ieee_specials):
    """All finite non-negative values of a small float format, decoded bit by bit."""
    out = set()
    top = (1 << ebits) - 1
    for e in range(1 << ebits):
        for m in range(1 << mbits):
            if ieee_specials and e == top:
                continue  # inf / NaN
            if e == 0:
                out.add(m / (1 << mbits) * 2.0 ** (1 - bias))
            else:
                out.add((1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    return out


def test_fp8_e5m2_max(mine):
    vals = fp_values(5, 2, 15, ieee_specials=True)
    assert max(vals) == 1.75 * 2**15 == 57344
    assert close(q(mine, "ie-fp8-e5m2-max"), max(vals))
    assert torch.finfo(torch.float8_e5m2).max == 57344
    assert torch.finfo(torch.float8_e4m3fn).max == 448
    assert torch.finfo(torch.float16).max == 65504
    # largest gap between neighbours relative to the value: 25% for E5M2, 12.5% for E4M3
    for mbits, ratio in ((2, 0.25), (3, 0.125)):
        assert 2.0**-mbits == ratio


E2M1 = sorted(fp_values(2, 1, 1, ieee_specials=False))


def test_e2m1_values(mine):
    x = q(mine, "ie-e2m1-values")
    assert E2M1 == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    listed = [float(s) for s in x.choices[x.correct].en.split(",")]
    assert listed == E2M1
    assert len({s * v for s in (1, -1) for v in E2M1}) == 15  # +0 and -0 coincide
    # E2M1's largest exponent is 2 (the emax_elem of the MX conversion)
    assert max(E2M1) == 1.5 * 2**2


def test_mx_and_nvfp4_bits(mine):
    assert close(q(mine, "ie-mxfp4-bits-per-element"), (32 * 4 + 8) / 32)
    assert close(q(mine, "ie-nvfp4-bits-per-element"), (16 * 4 + 8) / 16)
    assert (32 * 8 + 8) / 32 == 8.25  # MXFP8
    assert 4 + (16 + 16) / 128 == 4.25  # int4, group-128 fp16 scale + zero-point


def nearest_e2m1(v):
    """Round to the nearest E2M1 magnitude, clamping above 6 (ties are avoided by the examples)."""
    mag = min(abs(v), 6.0)
    best = min(E2M1, key=lambda g: abs(g - mag))
    return math.copysign(best, v)


def mx_fp4(amax):
    return 2.0 ** (math.floor(math.log2(amax)) - 2)


def test_mx_quantize_clamp(mine):
    scale = mx_fp4(30.0)
    assert scale == 4 and 30 / scale == 7.5
    deq = nearest_e2m1(30.0 / scale) * scale
    assert close(q(mine, "ie-mx-quantize-clamp"), deq)
    assert (30 - deq) / 30 == pytest.approx(0.2)
    # amax / X always lies in [4, 8): saturation whenever amax is in the top of its binade
    g = torch.Generator().manual_seed(0)
    for amax in (torch.rand(1000, generator=g) * 1000 + 1e-3).tolist():
        assert 4 <= amax / mx_fp4(amax) < 8
    # with X = 4, magnitudes below 1 round to 0
    assert nearest_e2m1(0.99 / 4) == 0 and nearest_e2m1(1.01 / 4) == 0.5
    # rounding the scale up instead: X = 2^ceil(log2(amax/6)) = 8, 30/8 = 3.75 -> 4 -> 32
    up = 2.0 ** math.ceil(math.log2(30 / 6))
    assert up == 8 and nearest_e2m1(30 / up) * up == 32


# -------------------------------------------------------------- evaluation ---


def ngrams(tokens, n):
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def clipped_precision(cand, ref, n):
    c, r = ngrams(cand, n), ngrams(ref, n)
    return sum(min(v, r[g]) for g, v in c.items()), sum(c.values())


def sentence_bleu(cand, ref, n_max=4):
    ps = [clipped_precision(cand, ref, n) for n in range(1, n_max + 1)]
    if any(m == 0 for m, _ in ps):
        return 0.0
    geo = math.exp(sum(math.log(m / t) for m, t in ps) / n_max)
    c, r = len(cand), len(ref)
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return bp * geo


def test_bleu_clipping_example(mine):
    m, t = clipped_precision("the the the the the the the".split(), "the cat is on the mat".split(), 1)
    assert (m, t) == (2, 7)


def test_bleu_toy(mine):
    cand, ref = "the cat sat on mat".split(), "the cat sat on the mat".split()
    ps = [clipped_precision(cand, ref, n) for n in range(1, 5)]
    assert ps == [(5, 5), (3, 4), (2, 3), (1, 2)]
    assert round(0.25**0.25, 4) == 0.7071 and round(math.exp(-0.2), 4) == 0.8187
    bleu = sentence_bleu(cand, ref)
    assert close(q(mine, "ie-bleu-toy"), bleu)
    assert round(1 - bleu, 2) == 0.42  # "dropping one word costs 42% of the score"


def lcs(a, b):
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            dp[i + 1][j + 1] = dp[i][j] + 1 if x == y else max(dp[i][j + 1], dp[i + 1][j])
    return dp[-1][-1]


def test_rouge_l(mine):
    ref, cand = "the cat sat on the mat".split(), "on the mat the cat sat".split()
    n = lcs(ref, cand)
    assert n == 3
    r, p = n / len(ref), n / len(cand)
    assert close(q(mine, "ie-rouge-l-lcs"), 2 * p * r / (p + r))
    # brute force: no common subsequence of length 4
    subs = {tuple(cand[i] for i in idx) for idx in itertools.combinations(range(6), 4)}
    refs = {tuple(ref[i] for i in idx) for idx in itertools.combinations(range(6), 4)}
    assert not subs & refs
    m1, _ = clipped_precision(cand, ref, 1)
    m2, t2 = clipped_precision(cand, ref, 2)
    assert m1 / 6 == 1.0 and (m2, t2) == (4, 5)


def test_corpus_perplexity_with_masked_cross_entropy(mine):
    logp = {"A": [-0.5, -1.0, -1.5], "B": [-3.0]}
    # build logits whose log-softmax gives exactly these target log-probs, pad B to length 3
    vocab, pad = 4, -100
    logits = torch.zeros(2, 3, vocab)
    targets = torch.full((2, 3), pad)
    for row, lps in enumerate(logp.values()):
        for t, lp in enumerate(lps):
            p = math.exp(lp)
            rest = (1 - p) / (vocab - 1)
            logits[row, t] = torch.tensor([math.log(p)] + [math.log(rest)] * (vocab - 1))
            targets[row, t] = 0
    nll = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=pad, reduction="sum")
    n_tok = (targets != pad).sum()
    ppl = math.exp((nll / n_tok).item())
    assert ppl == pytest.approx(math.exp(1.5), rel=1e-5)
    assert close(q(mine, "ie-corpus-perplexity"), ppl)
    assert round((math.e + math.e**3) / 2, 2) == 11.40
    assert round(math.exp(2), 2) == 7.39


def pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_benchmark_mean(mine):
    per = [pass_at_k(5, c, 2) for c in (5, 1, 0)]
    assert per == [1.0, pytest.approx(0.4), 0.0]
    # brute force over all 2-subsets of the 5 samples
    for c, est in zip((5, 1, 0), per):
        hits = sum(any(i < c for i in s) for s in itertools.combinations(range(5), 2))
        assert hits / math.comb(5, 2) == pytest.approx(est)
    assert close(q(mine, "ie-pass-at-k-benchmark-mean"), 100 * sum(per) / 3)
    assert 1 - (1 - 6 / 15) ** 2 == pytest.approx(0.64)


def test_elo_gap_from_win_rate(mine):
    gap = 400 * math.log10(0.75 / 0.25)
    assert close(q(mine, "ie-elo-gap-from-win-rate"), gap)
    win = lambda d: 1 / (1 + 10 ** (-d / 400))  # noqa: E731
    assert win(gap) == pytest.approx(0.75)
    assert round(win(100), 2) == 0.64 and round(win(400), 2) == 0.91


def test_win_rate_ties_ci(mine):
    s = torch.tensor([1.0] * 90 + [0.0] * 70 + [0.5] * 40, dtype=torch.float64)
    mean = s.mean().item()
    var = s.var(unbiased=False).item()
    assert mean == pytest.approx(0.55) and var == pytest.approx(0.1975)
    se = math.sqrt(var / len(s))
    assert round(se, 4) == 0.0314
    half = 1.96 * se
    assert close(q(mine, "ie-win-rate-ties-ci"), 100 * half)
    assert round(100 * (mean - half), 1) == 48.8 and round(100 * (mean + half), 1) == 61.2
    unbiased = math.sqrt(s.var(unbiased=True).item() / len(s))
    assert unbiased / se - 1 == pytest.approx(0.0025, abs=0.0002)  # "changes the result by 0.25%"
    assert 90 / 160 == 0.5625
    assert round((1.96 + 0.84) ** 2 * var / 0.05**2, -1) == 620  # prompts for 80% power at a 5-point edge


def test_aime_and_gpqa_noise(mine):
    se = math.sqrt(0.5 * 0.5 / 30)
    assert close(q(mine, "ie-aime-score-noise"), 100 * se)
    assert round(100 * 1.96 * se, 1) == 17.9
    assert round(100 / 30, 1) == 3.3  # one AIME problem in points
    assert round(100 * math.sqrt(0.7 * 0.3 / 198), 1) == 3.3  # GPQA Diamond SE at 70%
    assert round(0.02 * 198) == 4  # a 2-point gap is about 4 questions
