"""Fact checks for questions/moe.yaml, questions/quantization.yaml and questions/inference-serving.yaml.

Every numeric answer is recomputed from first principles (parameter counts from real modules on
the meta device), every shape answer is compared with the shape real torch code produces, and the
runnable claims in the prose are run: top-k gating, the Switch balancing loss and its minimum,
expert-choice balance, capacity dropping, FP8 ranges from torch's own dtypes, absmax rounding,
scales factoring out of an integer GEMM, SmoothQuant's equivalence, LLM.int8()'s decomposition,
GPTQ's error feedback and AWQ's scaling against round-to-nearest, and a radix prefix cache. Each
reference answer must itself hit every key point's keywords in both languages.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

SERVING_FILE = Path(__file__).resolve().parents[2] / "questions" / "inference-serving.yaml"


def serving_ids() -> set[str]:
    if not SERVING_FILE.exists():
        return set()
    return set(re.findall(r"^  - id: (\S+)$", SERVING_FILE.read_text(encoding="utf-8"), re.M))


@pytest.fixture(scope="module")
def mine(bank):
    """This file's questions, by id: the two new topics plus the serving questions."""
    extra = serving_ids()
    return {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem in {"moe", "quantization"} or qid in extra}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_topics_are_big_enough_and_span_levels(mine):
    for topic in ("moe", "quantization"):
        qs = [x for x in mine.values() if x.topic == topic]
        assert len(qs) >= 22, topic
        assert {x.level for x in qs} == {"L1", "L2", "L3"}, topic
        assert sum(x.objective for x in qs) / len(qs) >= 0.45, topic
        pitch = [x for x in qs if "pitch" in x.tags]
        assert [x.id for x in pitch] == [f"{topic}-pitch"], topic
        assert pitch[0].level == "L2" and pitch[0].type == "open" and pitch[0].time_limit == 60
        assert 100 <= len(pitch[0].answer.en.split()) <= 180, pitch[0].id
    serving = [x for x in mine.values() if x.topic == "inference"]
    assert len(serving) >= 6 and len(serving) == len(serving_ids())


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"\d", kw.strip()), (x.id, kw)


def test_reference_answers_hit_every_key_point(mine):
    for x in mine.values():
        for lang in ("en", "zh"):
            text = getattr(x.answer, lang).lower()
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_follow_up_chains_reach_l3(mine, bank):
    """Each topic has interviewer chains L1 -> L2 -> L3 inside it."""
    for topic in ("moe", "quantization"):
        chains = {
            (a.id, b, c)
            for a in mine.values() if a.topic == topic and a.level == "L1"
            for b in a.follow_ups if bank.questions[b].level == "L2"
            for c in bank.questions[b].follow_ups if bank.questions[c].level == "L3"
        }
        assert len(chains) >= 3, topic


NUMERIC_CHECKED = {
    "moe-topk-gate-weight",
    "moe-switch-aux-loss",
    "moe-capacity-tokens",
    "moe-mixtral-active-params",
    "moe-fine-grained-combinations",
    "moe-dropped-tokens",
    "moe-ep-all-to-all-volume",
    "moe-decode-tokens-per-expert",
    "quant-absmax-int8-code",
    "quant-70b-int4-memory",
    "quant-smoothquant-factor",
    "quant-group-scale-overhead",
    "quant-fp8-e4m3-max",
    "quant-kv-cache-fp8-capacity",
    "quant-w4-weight-read-speedup",
    "quant-w4a16-critical-batch",
    "quant-kv-share-of-decode-bytes",
    "infer-prefix-cache-savings",
    "infer-chunked-prefill-iterations",
    "infer-pd-kv-transfer-time",
}
SHAPE_CHECKED = {"quant-group-scales-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


# -------------------------------------------------------------------- moe ---


def test_topk_gate_weight(bank):
    x = q(bank, "moe-topk-gate-weight")
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0], dtype=torch.float64)
    top = torch.topk(logits, 2)
    assert top.indices.tolist() == [0, 1]
    masked = torch.full_like(logits, -math.inf).scatter(0, top.indices, top.values)
    w = torch.softmax(masked, dim=0)  # Mixtral: Softmax(Top2(x W_g)), others exactly 0
    assert w[2:].tolist() == [0.0, 0.0]
    assert close(x, w[0].item())
    full = torch.softmax(logits, dim=0)[0].item()  # the pitfall's "softmax over all four"
    assert round(full, 3) == 0.609 and "0.609" in x.answer.en and "0.609" in x.answer.zh


def switch_aux(f, p, alpha, n):
    return alpha * n * float((f * p).sum())


def test_switch_aux_loss(bank):
    x = q(bank, "moe-switch-aux-loss")
    f = torch.tensor([0.5, 0.25, 0.125, 0.125], dtype=torch.float64)
    p = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)
    loss = switch_aux(f, p, 0.01, 4)
    assert close(x, loss)
    assert math.isclose(loss / 0.01, 1.25)  # "pays 25% more" than the uniform value alpha
    u = torch.full((4,), 0.25, dtype=torch.float64)
    assert math.isclose(switch_aux(u, u, 0.01, 4), 0.01)


def test_switch_aux_loss_minimum_is_uniform_when_f_equals_p():
    """alpha·N·Σ f_i² ≥ alpha (Cauchy–Schwarz), equality only at uniform, for any N."""
    g = torch.Generator().manual_seed(0)
    for n in (2, 4, 8, 64):
        for _ in range(200):
            e = -torch.rand(n, generator=g, dtype=torch.float64).log()
            f = e / e.sum()  # a uniform draw from the simplex (Dirichlet(1))
            assert switch_aux(f, f, 1.0, n) >= 1.0 - 1e-9
        assert math.isclose(switch_aux(torch.full((n,), 1 / n), torch.full((n,), 1 / n), 1.0, n), 1.0)


def test_switch_aux_gradient_flows_through_p_only():
    """With f from an argmax (no grad), the gradient lowers the probability of overloaded experts."""
    logits = torch.tensor([[3.0, 0.0, 0.0, 0.0]] * 6 + [[0.0, 3.0, 0.0, 0.0]] * 2, requires_grad=True)
    probs = torch.softmax(logits, dim=-1)
    f = torch.nn.functional.one_hot(probs.argmax(-1), 4).double().mean(0)
    loss = 4 * (f.float() * probs.mean(0)).sum()
    loss.backward()
    assert logits.grad[0, 0] > 0  # gradient descent lowers the overloaded expert-0 logit


def test_capacity_tokens(bank):
    x = q(bank, "moe-capacity-tokens")
    cap = 4096 / 64 * 1.25
    assert close(x, cap)
    assert 64 * cap == 5120 and 64 * cap - 4096 == 1024 and (64 * cap - 4096) / (64 * cap) == 0.2


def switch_dispatch(expert_of_token: torch.Tensor, n_experts: int, capacity: int) -> torch.Tensor:
    """Keep mask: each expert keeps its first `capacity` tokens in order, the rest are dropped."""
    one_hot = torch.nn.functional.one_hot(expert_of_token, n_experts)
    position = (one_hot.cumsum(0) * one_hot).sum(-1)  # 1-based slot inside the chosen expert
    return position <= capacity


def test_dropped_tokens(bank):
    x = q(bank, "moe-dropped-tokens")
    loads = [400, 300, 200, 124]
    experts = torch.cat([torch.full((n,), i) for i, n in enumerate(loads)])
    experts = experts[torch.randperm(len(experts), generator=torch.Generator().manual_seed(0))]
    assert len(experts) == 1024
    keep = switch_dispatch(experts, 4, int(1024 / 4 * 1.25))
    dropped = int((~keep).sum())
    assert close(x, dropped)
    assert round(100 * dropped / 1024, 1) == 7.8
    keep1 = switch_dispatch(experts, 4, 256)
    assert int((~keep1).sum()) == 188 and round(100 * 188 / 1024, 1) == 18.4
    assert [320 - 200, 320 - 124] == [120, 196]


def mixtral_counts() -> tuple[int, int, int]:
    """(total, active, embedding+head) parameters of Mixtral 8x7B, from real modules on the meta device."""
    d, ff, layers, vocab, kv = 4096, 14336, 32, 32000, 8 * 128
    with torch.device("meta"):
        attn = torch.nn.ModuleList(
            [torch.nn.Linear(d, d, bias=False), torch.nn.Linear(d, kv, bias=False),
             torch.nn.Linear(d, kv, bias=False), torch.nn.Linear(d, d, bias=False)]
        )
        expert = torch.nn.ModuleList([torch.nn.Linear(d, ff, bias=False) for _ in range(2)] + [torch.nn.Linear(ff, d, bias=False)])
        embed = torch.nn.ModuleList([torch.nn.Embedding(vocab, d), torch.nn.Linear(d, vocab, bias=False)])
    n = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    total = layers * (n(attn) + 8 * n(expert)) + n(embed)
    active = layers * (n(attn) + 2 * n(expert)) + n(embed)
    return total, active, n(embed)


def test_mixtral_active_params(bank):
    x = q(bank, "moe-mixtral-active-params")
    total, active, embed = mixtral_counts()
    assert close(x, active / 1e9)
    assert round(total / 1e9, 1) == 46.7
    assert round((active - embed / 2) / 1e9, 2) == 12.75  # lookup costs no FLOPs
    assert round(3 * 4096 * 14336 / 1e6, 2) == 176.16 and round((2 * 4096**2 + 2 * 4096 * 1024) / 1e6, 2) == 41.94
    # the pitfall: K and V with 32 KV heads adds about 0.8B
    assert round(32 * 2 * 4096 * (4096 - 1024) / 1e9, 1) == 0.8


def test_mixtral_why_not_56b_breakdown(bank):
    total, _, embed = mixtral_counts()
    assert round(32 * 8 * 3 * 4096 * 14336 / 1e9, 1) == 45.1
    assert round(32 * 41.94e6 / 1e9, 2) == 1.34 and round(embed / 1e9, 2) == 0.26
    assert q(bank, "moe-mixtral-why-not-56b").correct == 0
    assert round(47 / 13, 1) == 3.6  # distractor C's ratio
    assert round(total * 2 / 1e9) == 93  # bf16 GB in moe-serving-challenges
    assert round(total * 0.5 / 1e9) == 23 and round(total / 1e9) == 47  # int4 / fp8 "≈ 24–47 GB" (scales add ~1 GB)


def test_fine_grained_combinations(bank):
    x = q(bank, "moe-fine-grained-combinations")
    assert math.comb(16, 2) == 120
    assert close(x, math.comb(64, 8))
    assert round(math.comb(64, 8) / 120 / 1e6) == 37
    assert 8 * (1 / 4) == 2


def expert_choice(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each expert (column) takes its top-k tokens; returns (tokens per expert, experts per token)."""
    n, e = scores.shape
    chosen = torch.topk(scores, k, dim=0).indices  # [k, e]
    per_expert = torch.tensor([chosen[:, j].numel() for j in range(e)])
    return per_expert, torch.bincount(chosen.flatten(), minlength=n)


def test_expert_choice_is_balanced_by_construction():
    n, e, c = 64, 8, 2
    k = n * c // e
    scores = torch.softmax(torch.randn(n, e, generator=torch.Generator().manual_seed(1)), dim=-1)
    per_expert, per_token = expert_choice(scores, k)
    assert per_expert.tolist() == [k] * e and per_token.sum() == k * e
    assert per_token.max() >= 2  # some tokens get several experts
    # tokens every expert prefers take all the slots; the others get no expert at all
    skewed = scores.clone()
    skewed[:k] += 10
    _, per_token = expert_choice(skewed, k)  # token-expert affinities, not renormalised
    assert per_token[:k].tolist() == [e] * k and per_token[k:].max() == 0


def test_router_z_loss_penalises_magnitude_not_the_routing():
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(2))
    z = lambda t: (torch.logsumexp(t, dim=-1) ** 2).mean()  # noqa: E731
    assert z(10 * x) > z(x)
    assert torch.equal(torch.softmax(x + 5, -1).argmax(-1), torch.softmax(x, -1).argmax(-1)) and z(x + 5) > z(x)


def test_ep_all_to_all_volume(bank):
    x = q(bank, "moe-ep-all-to-all-volume")
    copies = 4096 * 2
    bytes_each = 4096 * 2
    assert copies * bytes_each == 64 * 2**20
    remote = copies * bytes_each * 7 / 8
    assert remote == 58_720_256
    assert close(x, remote / 2**20)
    per_layer = 4 * remote  # dispatch + combine, forward + backward
    assert per_layer / 2**20 == 224 and 32 * per_layer / 2**30 == 7
    assert round(32 * per_layer / 50e9, 2) == 0.15


def test_decode_tokens_per_expert(bank):
    x = q(bank, "moe-decode-tokens-per-expert")
    assert close(x, 64 * 2 / 8)
    # "by then every expert is read every step": P(an expert gets no token of 64, top-2 of 8)
    p_idle = (math.comb(7, 2) / math.comb(8, 2)) ** 64
    assert p_idle < 1e-7
    assert 8 / 2 == 4  # "N/k: here 4x larger"


# ----------------------------------------------------------- quantization ---


def absmax_quant(x: torch.Tensor, bits: int = 8, dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric round-to-nearest; returns (integer codes, step). dim=None: one scale for the tensor."""
    qmax = 2 ** (bits - 1) - 1
    amax = x.abs().amax() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    step = amax / qmax
    return torch.clamp(torch.round(x / step), -qmax, qmax), step


def test_absmax_int8_code(bank):
    x = q(bank, "quant-absmax-int8-code")
    row = torch.tensor([1.27, -0.5, 0.333, 0.01], dtype=torch.float64)
    codes, step = absmax_quant(row)
    assert math.isclose(step.item(), 0.01) and codes[0] == 127
    assert close(x, codes[2].item())
    assert math.isclose((codes[2] * step).item(), 0.33) and math.isclose(0.333 - 0.33, 0.003, rel_tol=1e-6)
    with_outlier, step2 = absmax_quant(torch.tensor([12.7, 0.333], dtype=torch.float64))
    assert with_outlier[1] == 3 and math.isclose((3 * step2).item(), 0.3)


def test_70b_int4_memory(bank):
    x = q(bank, "quant-70b-int4-memory")
    assert close(x, 70e9 * 4 / 8 / 1e9)
    assert round(70e9 * 0.5 / 2**30, 1) == 32.6 and 70e9 * 2 / 1e9 == 140


def test_fp8_ranges_match_torch_dtypes(bank):
    x = q(bank, "quant-fp8-e4m3-max")
    e4m3, e5m2 = torch.finfo(torch.float8_e4m3fn), torch.finfo(torch.float8_e5m2)
    assert close(x, 1.75 * 2 ** (0b1111 - 7)) and close(x, e4m3.max)
    assert e5m2.max == 1.75 * 2 ** (0b11110 - 15) == 57344
    assert e4m3.tiny == 2**-6 and e5m2.tiny == 2**-14
    bits = torch.tensor([0x7E, 0x7F], dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    assert bits[0] == 448 and torch.isnan(bits[1])  # S.1111.110 is the max, S.1111.111 is NaN
    assert torch.tensor([0x7C], dtype=torch.uint8).view(torch.float8_e5m2).float().isinf().all()  # E5M2 keeps Inf


def test_scales_indexed_by_token_and_output_channel_factor_out():
    g = torch.Generator().manual_seed(3)
    X = torch.randn(6, 32, generator=g, dtype=torch.float64)
    W = torch.randn(32, 5, generator=g, dtype=torch.float64)
    xq, a = absmax_quant(X, dim=1)  # per token
    wq, b = absmax_quant(W, dim=0)  # per output channel
    integer_gemm = xq @ wq
    assert torch.equal(integer_gemm, torch.round(integer_gemm))
    assert torch.allclose(a * integer_gemm * b, (a * xq) @ (b * wq))


def smooth(X: torch.Tensor, W: torch.Tensor, alpha: float) -> torch.Tensor:
    """SmoothQuant's per-input-channel factor for Y = X W with W as [d_in, d_out]."""
    return X.abs().amax(0) ** alpha / W.abs().amax(1) ** (1 - alpha)


def test_smoothquant_factor_and_equivalence(bank):
    x = q(bank, "quant-smoothquant-factor")
    assert close(x, 64**0.5 / 0.25**0.5)
    assert 64 / x.value == 0.25 * x.value == (64 * 0.25) ** 0.5 == 4
    g = torch.Generator().manual_seed(4)
    X = torch.randn(256, 64, generator=g, dtype=torch.float64)
    X[:, 7] *= 60  # an outlier channel, present in every token
    W = torch.randn(64, 32, generator=g, dtype=torch.float64) * 0.05
    s = smooth(X, W, 0.5)
    Xs, Ws = X / s, W * s[:, None]
    assert torch.allclose(Xs @ Ws, X @ W)  # mathematically equivalent
    assert torch.allclose(Xs.abs().amax(0), Ws.abs().amax(1))  # alpha = 0.5 equalises the maxima

    def w8a8_error(A, B):
        aq, sa = absmax_quant(A)  # per-tensor activations
        bq, sb = absmax_quant(B, dim=0)
        return ((aq * sa) @ (bq * sb) - X @ W).norm() / (X @ W).norm()

    assert w8a8_error(Xs, Ws) < 0.5 * w8a8_error(X, W)


def test_llm_int8_decomposition_beats_plain_vector_wise():
    g = torch.Generator().manual_seed(5)
    X = torch.randn(64, 128, generator=g, dtype=torch.float64)
    X[:, [3, 90]] *= 40  # systematic outlier features
    W = torch.randn(128, 64, generator=g, dtype=torch.float64) * 0.02
    ref = X @ W

    def vector_wise(A, B):
        aq, sa = absmax_quant(A, dim=1)
        bq, sb = absmax_quant(B, dim=0)
        return sa * (aq @ bq) * sb

    outliers = (X.abs() > 6).any(0)
    assert outliers.sum() >= 2 and outliers.float().mean() < 0.2
    mixed = X[:, outliers] @ W[outliers] + vector_wise(X[:, ~outliers], W[~outliers])
    err = lambda y: ((y - ref).norm() / ref.norm()).item()  # noqa: E731
    assert err(mixed) < 0.25 * err(vector_wise(X, W))


def test_gptq_error_feedback_beats_round_to_nearest():
    """Column-by-column rounding with inverse-Hessian error feedback (fixed order) vs RTN, same grid."""
    g = torch.Generator().manual_seed(6)
    rows, cols, n = 32, 64, 512
    X = torch.randn(cols, cols, generator=g, dtype=torch.float64) @ torch.randn(cols, n, generator=g, dtype=torch.float64)
    W = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    step = W.abs().amax(1, keepdim=True) / 3  # 3-bit symmetric, per output row, grid fixed up front
    quant = lambda w, s: torch.clamp(torch.round(w / s), -3, 3) * s  # noqa: E731
    H = 2 * X @ X.T
    H += 0.01 * H.diag().mean() * torch.eye(cols, dtype=torch.float64)  # dampening
    Hinv = torch.linalg.inv(H)
    Wq = W.clone()
    for c in range(cols):
        w = Wq[:, c].clone()
        qw = quant(w.unsqueeze(1), step).squeeze(1)
        err = (w - qw) / Hinv[c, c]
        Wq[:, c + 1:] -= err[:, None] * Hinv[c, c + 1:][None, :]
        Wq[:, c] = qw
        Hinv = Hinv - Hinv[:, c:c + 1] @ Hinv[c:c + 1, :] / Hinv[c, c]  # eliminate column c
    rtn = quant(W, step)
    out_err = lambda A: ((A - W) @ X).norm().item()  # noqa: E731
    assert out_err(Wq) < 0.8 * out_err(rtn)
    assert (rtn - W).norm() < (Wq - W).norm()  # GPTQ minimises output error, not weight error


def test_awq_scaling_of_salient_channels_reduces_output_error():
    g = torch.Generator().manual_seed(7)
    X = torch.randn(512, 64, generator=g, dtype=torch.float64)
    X[:, :2] *= 20  # ~3% salient input channels by activation magnitude
    W = torch.randn(64, 48, generator=g, dtype=torch.float64)
    s_x = X.abs().mean(0)

    def err(alpha):
        s = s_x**alpha
        Wq = absmax_quant(W * s[:, None], bits=3, dim=0)
        return (((X / s) @ (Wq[0] * Wq[1]) - X @ W).norm() / (X @ W).norm()).item()

    grid = [i / 20 for i in range(21)]
    best = min(grid, key=err)
    assert best > 0 and err(best) < 0.9 * err(0.0)


def test_group_scales_shape_and_overhead(bank):
    x = q(bank, "quant-group-scales-shape")
    with torch.device("meta"):
        w = torch.nn.Linear(11008, 4096, bias=False).weight
        scales = w.view(4096, 11008 // 128, 128).abs().amax(-1)
    assert tuple(w.shape) == (4096, 11008)
    assert shape_of(x.shape) == tuple(scales.shape)
    assert scales.numel() == 352_256 and w.numel() == 45_088_768
    y = q(bank, "quant-group-scale-overhead")
    assert close(y, 4 + (16 + 16) / 128)
    assert 4 + 16 / 128 == 4.125 and round(4 + 20 / 128, 2) == 4.16
    assert round(70e9 * 4.25 / 8 / 1e9, 1) == 37.2


def shape_of(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.strip("[]() ").split(","))


def test_w4_weight_read_speedup(bank):
    x = q(bank, "quant-w4-weight-read-speedup")
    assert close(x, 16 / (4 + 32 / 128))
    assert round(140e9 / 3.35e12 * 1e3) == 42 and round(70e9 * 4.25 / 8 / 3.35e12 * 1e3) == 11


def test_w4a16_critical_batch(bank):
    x = q(bank, "quant-w4a16-critical-batch")
    ridge = 312e12 / 2.039e12
    assert round(ridge) == 153
    assert close(x, ridge / (2 / 0.5))
    b = 100  # between the two crossovers fp16 is memory-bound, int4 compute-bound
    fp16_time, int4_time = 2 / 2.039e12, 2 * b / 312e12  # per weight
    assert math.isclose(fp16_time / int4_time, ridge / b)


def test_kv_cache_fp8_capacity(bank):
    x = q(bank, "quant-kv-cache-fp8-capacity")
    per_token_fp16 = 2 * 80 * 8 * 128 * 2
    assert per_token_fp16 == 320 * 2**10
    per_token_fp8 = per_token_fp16 // 2
    assert per_token_fp8 == 163_840
    assert close(x, 40 * 2**30 / per_token_fp8)
    assert 40 * 2**30 // per_token_fp16 == 131_072 and 131_072 // 4096 == 32 and 262_144 // 4096 == 64


def test_kv_share_of_decode_bytes(bank):
    x = q(bank, "quant-kv-share-of-decode-bytes")
    weights = 8.03e9 * 2
    kv = 2 * 32 * 8 * 128 * 2 * 16 * 8192
    assert 2 * 32 * 8 * 128 * 2 == 131_072 and round(kv / 1e9, 2) == 17.18
    assert close(x, 100 * kv / (weights + kv))
    total = weights + kv
    assert round(total / (8.03e9 * 4.25 / 8 + kv), 2) == 1.55
    assert round(total / (weights + kv / 2), 2) == 1.35
    assert round(total / (8.03e9 * 4.25 / 8 + kv / 2), 1) == 2.6


# ---------------------------------------------------------------- serving ---


class RadixCache:
    """Minimal prefix cache: a trie over tokens; counts how many tokens each request must prefill."""

    def __init__(self):
        self.root: dict = {}

    def prefill_tokens(self, tokens: list[int]) -> int:
        node, matched = self.root, 0
        for tok in tokens:
            if tok not in node:
                break
            node, matched = node[tok], matched + 1
        for tok in tokens[matched:]:
            node = node.setdefault(tok, {})
        return len(tokens) - matched


def test_prefix_cache_savings(bank):
    x = q(bank, "infer-prefix-cache-savings")
    system = list(range(2000))
    requests = [system + [10_000 + 1000 * r + i for i in range(200)] for r in range(100)]
    cache = RadixCache()
    with_cache = sum(cache.prefill_tokens(r) for r in requests)
    without = sum(len(r) for r in requests)
    assert (without, with_cache) == (220_000, 22_000) == (100 * 2200, 2200 + 99 * 200)
    assert close(x, 100 * (1 - with_cache / without))


def test_chunked_prefill_iterations(bank):
    x = q(bank, "infer-chunked-prefill-iterations")
    budget, decodes, remaining, iterations, last = 512, 100, 4000, 0, 0
    while remaining > 0:
        last = min(budget - decodes, remaining)
        remaining -= last
        iterations += 1
    assert close(x, iterations)
    assert last == 292 and 9 * 412 == 3708 and math.ceil(4000 / (2048 - 100)) == 3


def test_pd_kv_transfer_time(bank):
    x = q(bank, "infer-pd-kv-transfer-time")
    per_token = 2 * 80 * 8 * 128 * 2
    total = per_token * 2048
    assert per_token == 327_680 and total == 671_088_640 == 640 * 2**20
    assert close(x, total / 5e10 * 1e3)
    prefill = 2 * 70e9 * 2048 / (8 * 0.5 * 989e12)
    assert round(prefill * 1e3) == 72 or round(prefill * 1e3) == 73
    assert round(total / 5e10 / prefill * 100) == 19 or round(total / 5e10 / prefill * 100) == 18
    assert round(total / 450e9 * 1e3, 1) == 1.5


def test_serve_70b_design_numbers():
    kv_tokens = 150e9 / (320 * 2**10)
    assert 440_000 < kv_tokens < 460_000 and 105 < kv_tokens / 4096 < 115
    assert round(35e9 / 3.35e12 * 1e3, 1) == 10.4
    prefill = 2 * 70e9 * 4096
    assert round(prefill / 1e14, 1) == 5.7 and round(prefill / (4 * 0.5 * 989e12), 1) == 0.3
