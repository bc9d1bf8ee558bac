"""Fact checks for questions/complexity.yaml, flash-attention.yaml and inference.yaml.

Every numeric answer is recomputed from first principles (byte counts via torch's
own element sizes and meta tensors, FLOPs via ``torch.utils.flop_counter``), every
shape answer is compared with the shape that real torch code produces, and the
algorithms the answers describe (online softmax, the FlashAttention output rescale,
the split-KV logsumexp merge, the ``D = rowsum(dO * O)`` identity, KV-cache decoding,
top-p, temperature, speculative sampling) are implemented here and checked against
plain torch.
"""

from __future__ import annotations

import math
import re

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

TOPICS = {"complexity": "cx-", "flash-attention": "flash-", "inference": "infer-"}
GiB = 2**30
MiB = 2**20
KiB = 2**10


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of the three files, by id (newer files may share the topics and prefixes)."""
    return {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem in TOPICS}


def close(q, computed):
    return abs(q.value - computed) <= q.tolerance + 1e-9


def flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def nbytes(t) -> int:
    return t.nelement() * t.element_size()


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch=1, dtype=torch.float16):
    """Bytes of a real (meta) per-layer K and V cache in the HF layout [B, H_kv, T, d]."""
    total = 0
    for _ in range(n_layers):
        k = meta(batch, n_kv_heads, seq_len, head_dim, dtype=dtype)
        v = meta(batch, n_kv_heads, seq_len, head_dim, dtype=dtype)
        total += nbytes(k) + nbytes(v)
    formula = 2 * n_layers * n_kv_heads * head_dim * seq_len * batch * torch.tensor([], dtype=dtype).element_size()
    assert total == formula
    return total


# --------------------------------------------------------------- structure ---


def depth3_paths(mine):
    return {
        (a.id, b, c)
        for a in mine.values()
        if a.level == "L1"
        for b in a.follow_ups
        if mine[b].level == "L2"
        for c in mine[b].follow_ups
        if mine[c].level == "L3"
    }


def test_choices_and_references(mine):
    for q in mine.values():
        if q.type == "choice":
            assert 3 <= len(q.choices) <= 5, q.id
        assert q.references or "pitch" in q.tags or q.type != "open" or q.level == "L1", q.id


_LATEX = [("{,}", ","), ("\\cdot", "·"), ("\\times", "×"), ("\\le", "≤"), ("\\ge", "≥"),
          ("\\odot", "∘"), ("\\approx", "≈"), ("\\,", ""), ("\\mathrm", ""), ("\\tilde", ""),
          ("\\lceil", ""), ("\\rceil", ""), ("\\big", "")]


def _norm(text: str) -> str:
    """Lower-case, with the light LaTeX of the reference answers turned into typed text."""
    for latex, typed in _LATEX:
        text = text.replace(latex, typed)
    text = re.sub(r"[${}]", "", text)
    return re.sub(r"[ \t]+", " ", text).lower()


def test_reference_answers_hit_their_own_key_points(mine):
    """Each key point has a keyword that the reference answer itself contains."""
    for q in mine.values():
        for kp in q.key_points:
            for lang in ("en", "zh"):
                words = getattr(kp.keywords, lang)
                text = _norm(q.answer.get(lang))
                assert any(_norm(w) in text for w in words), (q.id, lang, words)


# --------------------------------------------------- numeric: complexity ---

NUMERIC: dict[str, callable] = {}


def numeric(qid):
    def register(fn):
        NUMERIC[qid] = fn
        return fn

    return register


@numeric("cx-score-matrix-32k-fp32")
def _score_32k():
    scores = meta(32768, 32768, dtype=torch.float32)
    assert nbytes(scores) == 4_294_967_296 == 2**32
    return nbytes(scores) / GiB


@numeric("cx-qkt-flops")
def _attention_backward_flops():
    """FlashAttention's backward: autograd's four matmuls plus one recomputation of S = QK^T."""
    T, d = 2048, 128
    q, k, v = (torch.randn(T, d, requires_grad=True) for _ in range(3))
    with FlopCounterMode(display=False) as fwd:
        out = torch.softmax(q @ k.T / math.sqrt(d), -1) @ v
    with FlopCounterMode(display=False) as bwd:
        out.backward(torch.randn(T, d))
    one = 2 * T * T * d
    assert one == 1_073_741_824
    assert fwd.get_total_flops() == 2 * one and bwd.get_total_flops() == 4 * one  # dQ, dK, dV, dP
    recompute = flops(lambda: q.detach() @ k.detach().T)
    total = bwd.get_total_flops() + recompute
    assert total == 5 * one == 5_368_709_120 and total / fwd.get_total_flops() == 2.5
    return total / 1e9


@numeric("cx-score-memory-llama2-13b")
def _llama13b_probs():
    layers, heads, T = 40, 40, 4096
    per_layer = nbytes(meta(1, heads, T, T))
    assert per_layer == 1_342_177_280 and per_layer / GiB == 1.25
    return layers * per_layer / GiB


@numeric("cx-attention-activation-gpt3")
def _gpt3_attention_activations():
    a, s, b = 96, 2048, 1
    softmax_out = meta(b, a, s, s, dtype=torch.float16)
    dropout_mask = meta(b, a, s, s, dtype=torch.bool)
    dropout_out = meta(b, a, s, s, dtype=torch.float16)
    total = nbytes(softmax_out) + nbytes(dropout_mask) + nbytes(dropout_out)
    assert total == 5 * a * s * s * b == 2_013_265_920
    return total / GiB


@numeric("cx-projection-attention-crossover")
def _crossover():
    d = 4096
    T = 2 * d  # solves 8*T*d^2 == 4*T^2*d
    x = meta(T, d)
    proj = torch.nn.Linear(d, d, bias=False, device="meta", dtype=torch.float16)
    projection_flops = flops(lambda: [proj(x) for _ in range(4)])  # Q, K, V, O
    h = 32
    q = k = v = meta(h, T, d // h)
    attention_flops = flops(lambda: (q @ k.transpose(-2, -1)) @ v)
    assert projection_flops == 8 * T * d * d
    assert attention_flops == 4 * T * T * d
    assert projection_flops == attention_flops
    return T


@numeric("cx-6nd-training-days")
def _training_days_with_recomputation():
    N, D = 7e9, 2e12
    executed = 8 * N * D  # full recomputation reruns the 2N forward
    assert math.isclose(executed, 1.12e23)
    throughput = 1024 * 312e12 * 0.4
    assert math.isclose(throughput, 1.278e17, rel_tol=1e-3)
    seconds = executed / throughput
    assert math.isclose(6 * N * D / seconds / (1024 * 312e12), 0.30)  # MFU = 40% HFU * 6/8
    assert round(6 * N * D / throughput / 86400, 1) == 7.6  # without recomputation
    return seconds / 86400


# ------------------------------------------------ numeric: flash-attention ---


def online_softmax_stats(blocks):
    m, l = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    for block in blocks:
        m_new = torch.maximum(m, block.max())
        l = torch.exp(m - m_new) * l + torch.exp(block - m_new).sum()
        m = m_new
    return m, l


@numeric("flash-online-softmax-numeric")
def _online_numeric():
    blocks = [torch.tensor([1.0, 3.0], dtype=torch.float64), torch.tensor([2.0, 5.0], dtype=torch.float64)]
    m, l = online_softmax_stats(blocks)
    full = torch.cat(blocks)
    assert m.item() == 5.0
    assert math.isclose(l.item(), torch.exp(full - 5.0).sum().item(), rel_tol=1e-12)
    # the pitfall: adding without rescaling
    naive = (torch.exp(blocks[0] - 3.0).sum() + torch.exp(blocks[1] - 5.0).sum()).item()
    assert round(naive, 3) == 2.185
    return l.item()


# ------------------------------------------------------ numeric: inference ---


@numeric("infer-kv-llama2-7b")
def _kv_7b():
    per_token = kv_cache_bytes(32, 32, 128, 1)
    assert per_token == 524_288 == MiB // 2
    total = kv_cache_bytes(32, 32, 128, 4096)
    assert total == 2_147_483_648
    return total / GiB


@numeric("infer-kv-llama2-70b-gqa")
def _kv_70b():
    per_token = kv_cache_bytes(80, 8, 128, 1)
    assert per_token == 327_680 == 320 * KiB
    total = kv_cache_bytes(80, 8, 128, 4096)
    assert total == 1_342_177_280
    assert kv_cache_bytes(80, 64, 128, 4096) == 8 * total == 10 * GiB  # if it were MHA
    return total / GiB


@numeric("infer-rolling-buffer-mistral")
def _rolling_buffer():
    window = 4096
    total = kv_cache_bytes(32, 8, 128, window)
    assert total == 536_870_912
    assert kv_cache_bytes(32, 8, 128, 32768) == 4 * GiB == 8 * total
    assert kv_cache_bytes(32, 8, 128, 1) == 128 * KiB
    return total / GiB


@numeric("infer-sliding-receptive-field")
def _receptive_field():
    """Propagate reachability through 32 layers of sliding-window masks (scaled-down, then scaled)."""
    layers, window, T = 4, 3, 20
    i = torch.arange(T)
    mask = ((i[:, None] - i[None, :]) >= 0) & ((i[:, None] - i[None, :]) <= window)  # attend to i-W..i
    reach = torch.eye(T, dtype=torch.bool)
    for _ in range(layers):
        reach = (mask.float() @ reach.float()) > 0
    span = (T - 1) - int(torch.nonzero(reach[T - 1])[0])
    assert span == layers * window
    return 32 * 4096


@numeric("infer-decode-intensity")
def _decode_intensity():
    d = 4096
    layer = torch.nn.Linear(d, d, bias=False, device="meta", dtype=torch.float16)
    x = meta(1, d)  # batch 1, one token
    return flops(lambda: layer(x)) / nbytes(layer.weight)


@numeric("infer-decode-latency-floor")
def _latency_floor():
    weight_bytes = 7e9 * torch.tensor([], dtype=torch.float16).element_size()
    seconds = weight_bytes / 2.0e12
    assert round(1 / seconds) == 143
    return seconds * 1e3


@numeric("infer-decode-critical-batch")
def _critical_batch():
    d = 1024
    layer = torch.nn.Linear(d, d, bias=False, device="meta", dtype=torch.bfloat16)
    for b in (1, 7, 64):
        assert flops(lambda: layer(meta(b, d, dtype=torch.bfloat16))) / nbytes(layer.weight) == b
    return 312e12 / 2.039e12


@numeric("infer-paged-block-waste")
def _block_waste():
    block, tokens = 16, 1000
    blocks = -(-tokens // block)
    assert blocks == 63
    return blocks * block - tokens


def top_p_filter(probs: torch.Tensor, p: float) -> torch.Tensor:
    """Hugging Face style: drop tokens whose cumulative mass (excluding themselves) is >= p."""
    sorted_probs, order = probs.sort(descending=True)
    cum = sorted_probs.cumsum(-1)
    remove = cum > p
    remove[1:] = remove[:-1].clone()
    remove[0] = False
    kept = torch.zeros_like(probs)
    kept[order[~remove]] = probs[order[~remove]]
    return kept / kept.sum()


@numeric("infer-top-p-numeric")
def _top_p():
    probs = torch.tensor([0.30, 0.25, 0.20, 0.15, 0.10], dtype=torch.float64)
    nucleus = top_p_filter(probs, 0.8)
    # the "smallest set with cumulative >= p" definition agrees, and the pitfall stops one short
    cum = probs.sort(descending=True).values.cumsum(-1)
    assert int((cum < 0.8).sum()) + 1 == 4 and int((cum < 0.8).sum()) == 3
    assert round(nucleus[0].item(), 3) == 0.333
    peaked = torch.tensor([0.90, 0.05, 0.03, 0.02], dtype=torch.float64)
    assert int((top_p_filter(peaked, 0.8) > 0).sum()) == 1  # the adaptivity the answer shows
    return float((nucleus > 0).sum())


def test_every_numeric_question_is_recomputed(mine):
    numeric_ids = {q.id for q in mine.values() if q.type == "numeric"}
    assert numeric_ids == set(NUMERIC)


@pytest.mark.parametrize("qid", sorted(NUMERIC))
def test_numeric_value(bank, qid):
    q = bank.questions[qid]
    computed = NUMERIC[qid]()
    assert close(q, computed), (qid, q.value, computed)


# ----------------------------------------------------------------- shapes ---


def shape_from_answer(text: str, sizes: dict[str, int]) -> tuple[int, ...]:
    dims = [x.strip() for x in text.strip("[]() ").split(",")]
    return tuple(int(x) if x.isdigit() else sizes[x.lower()] for x in dims)


def _scores_shape():
    """The forgotten head transpose: [B, T, H, d] @ [B, T, d, H] attends across heads."""
    B, T, H, dk = 2, 10, 8, 64
    x_q, x_k = torch.randn(B, T, H * dk), torch.randn(B, T, H * dk)
    q, k = x_q.view(B, T, H, dk), x_k.view(B, T, H, dk)
    right = q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)
    assert right.shape == (B, H, T, T)
    return (q @ k.transpose(-2, -1)).shape, {}


def _cross_shape():
    B, H, Tq, Tk, dm = 2, 3, 5, 11, 12
    mha = torch.nn.MultiheadAttention(dm, H, batch_first=True)
    dec, enc = torch.randn(B, Tq, dm), torch.randn(B, Tk, dm)
    _, weights = mha(dec, enc, enc, need_weights=True, average_attn_weights=False)
    q = dec.view(B, Tq, H, dm // H).transpose(1, 2)
    k = enc.view(B, Tk, H, dm // H).transpose(1, 2)
    assert (q @ k.transpose(-2, -1)).shape == weights.shape
    return weights.shape, {"b": B, "h": H, "t_q": Tq, "t_k": Tk}


def _decode_shape():
    """GQA decoding with a group axis instead of repeat_interleave; equals the expanded scores."""
    B, H, H_kv, d, L = 2, 32, 8, 128, 100
    G = H // H_kv
    q = torch.randn(B, H, 1, d)
    k_cache = torch.randn(B, H_kv, L, d)
    grouped = torch.einsum("bkgqd,bkld->bkgql", q.view(B, H_kv, G, 1, d), k_cache)
    expanded = q @ k_cache.repeat_interleave(G, dim=1).transpose(-2, -1)
    torch.testing.assert_close(grouped.reshape(B, H, 1, L), expanded, rtol=1e-4, atol=1e-4)
    return grouped.shape, {}


def _gqa_shape():
    B, L, d_model, n_q, n_kv, hd = 2, 3, 8192, 64, 8, 128
    k_proj = torch.nn.Linear(d_model, n_kv * hd, bias=False)
    x = torch.randn(B, L, d_model)
    k = k_proj(x).view(B, L, n_kv, hd).transpose(1, 2)
    # at compute time each KV head serves n_q // n_kv query heads
    q = torch.randn(B, n_q, 1, hd)
    scores = q @ k.repeat_interleave(n_q // n_kv, dim=1).transpose(-2, -1)
    assert scores.shape == (B, n_q, 1, L)
    return k.shape, {"b": B, "l": L}


SHAPES = {
    "cx-scores-shape": _scores_shape,
    "cx-cross-attention-scores-shape": _cross_shape,
    "infer-decode-scores-shape": _decode_shape,
    "infer-gqa-kv-shape": _gqa_shape,
}


def test_every_shape_question_is_checked(mine):
    assert {q.id for q in mine.values() if q.type == "shape"} == set(SHAPES)


@pytest.mark.parametrize("qid", sorted(SHAPES))
def test_shape(bank, qid):
    produced, sizes = SHAPES[qid]()
    assert shape_from_answer(bank.questions[qid].shape, sizes) == tuple(produced)


# ------------------------------------------- algorithms the answers rely on ---


def test_online_softmax_blockwise_equals_softmax():
    torch.manual_seed(0)
    x = torch.randn(1000, dtype=torch.float64) * 5
    m, l = online_softmax_stats(x.split(64))
    assert torch.allclose(torch.exp(x - m) / l, torch.softmax(x, dim=0), atol=1e-12)
    assert m == x.max()


def flash_forward(q, k, v, block=16, normalise_every_step=False):
    """FlashAttention forward for one head: v2-style (rescale, divide once) or v1-style."""
    T, d = q.shape
    scale = d**-0.5
    m = torch.full((T, 1), -math.inf, dtype=q.dtype)
    l = torch.zeros(T, 1, dtype=q.dtype)
    o = torch.zeros_like(q)
    for j in range(0, k.shape[0], block):
        s = (q @ k[j : j + block].T) * scale
        m_new = torch.maximum(m, s.max(dim=1, keepdim=True).values)
        p = torch.exp(s - m_new)
        alpha = torch.exp(m - m_new)
        l_new = alpha * l + p.sum(dim=1, keepdim=True)
        if normalise_every_step:  # FlashAttention-1: O stays normalised
            o = (l * alpha * o + p @ v[j : j + block]) / l_new
        else:  # FlashAttention-2: un-normalised accumulator
            o = alpha * o + p @ v[j : j + block]
        m, l = m_new, l_new
    if not normalise_every_step:
        o = o / l
    return o, m + torch.log(l)


def test_flash_forward_is_exact_attention():
    torch.manual_seed(1)
    q, k, v = (torch.randn(50, 8, dtype=torch.float64) for _ in range(3))
    ref = torch.softmax(q @ k.T / math.sqrt(8), dim=-1) @ v
    for v1 in (False, True):
        out, lse = flash_forward(q, k, v, block=7, normalise_every_step=v1)
        assert torch.allclose(out, ref, atol=1e-12)
        assert torch.allclose(lse.squeeze(1), torch.logsumexp(q @ k.T / math.sqrt(8), dim=-1), atol=1e-12)
    sdpa = F.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    assert torch.allclose(sdpa, ref, atol=1e-12)


def test_backward_recomputes_p_from_logsumexp_and_d_is_rowsum_do_o():
    torch.manual_seed(2)
    T, d = 20, 8
    q, k, v = (torch.randn(T, d, dtype=torch.float64, requires_grad=True) for _ in range(3))
    s = q @ k.T
    s.retain_grad()
    p = torch.softmax(s, dim=-1)
    o = p @ v
    d_o = torch.randn_like(o)
    o.backward(d_o)
    lse = torch.logsumexp(s, dim=-1, keepdim=True)
    p_recomputed = torch.exp(s - lse)
    assert torch.allclose(p_recomputed, p, atol=1e-12)
    d_p = d_o @ v.T
    D = (d_o * o).sum(dim=-1, keepdim=True)  # rowsum(dO * O)
    assert torch.allclose(D, (p * d_p).sum(dim=-1, keepdim=True), atol=1e-12)
    assert torch.allclose(p * (d_p - D), s.grad, atol=1e-12)
    assert torch.allclose(v.grad, p.T @ d_o, atol=1e-12)


def test_split_kv_logsumexp_merge_is_exact():
    torch.manual_seed(3)
    L, d = 100, 16
    q = torch.randn(1, d, dtype=torch.float64)
    k, v = torch.randn(L, d, dtype=torch.float64), torch.randn(L, d, dtype=torch.float64)
    ref = torch.softmax(q @ k.T, dim=-1) @ v
    outs, lses = [], []
    for kc, vc in zip(k.split(23), v.split(23)):
        s = q @ kc.T
        outs.append(torch.softmax(s, dim=-1) @ vc)
        lses.append(torch.logsumexp(s, dim=-1))
    lse = torch.logsumexp(torch.stack(lses), dim=0)
    merged = sum(torch.exp(l_c - lse)[:, None] * o_c for o_c, l_c in zip(outs, lses))
    assert torch.allclose(merged, ref, atol=1e-12)


def test_kv_cache_decoding_matches_full_causal_attention():
    """Only the newest query is needed each step; cached K/V reproduce the full computation."""
    torch.manual_seed(4)
    T, dm, H = 9, 12, 3
    mha = torch.nn.MultiheadAttention(dm, H, batch_first=True, bias=False).double()
    x = torch.randn(1, T, dm, dtype=torch.float64)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    full, _ = mha(x, x, x, attn_mask=causal)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    k_cache, v_cache, outs = [], [], []
    for t in range(T):
        xt = x[:, t]
        k_cache.append(xt @ w_k.T)
        v_cache.append(xt @ w_v.T)
        q = (xt @ w_q.T).view(1, H, 1, dm // H)
        K = torch.stack(k_cache, 1).view(1, t + 1, H, dm // H).transpose(1, 2)
        V = torch.stack(v_cache, 1).view(1, t + 1, H, dm // H).transpose(1, 2)
        scores = q @ K.transpose(-2, -1) / math.sqrt(dm // H)
        assert scores.shape == (1, H, 1, t + 1)
        o = (torch.softmax(scores, -1) @ V).transpose(1, 2).reshape(1, dm)
        outs.append(mha.out_proj(o))
    assert torch.allclose(torch.stack(outs, 1), full, atol=1e-10)


def test_mha_flops_equal_single_wide_head_but_h_score_matrices():
    T, dm, h = 256, 512, 8
    wide = meta(1, T, dm)
    split = meta(h, T, dm // h)
    f_wide = flops(lambda: (wide @ wide.transpose(-2, -1)) @ wide)
    f_split = flops(lambda: (split @ split.transpose(-2, -1)) @ split)
    assert f_wide == f_split == 4 * T * T * dm
    assert nbytes(split @ split.transpose(-2, -1)) == h * nbytes(wide @ wide.transpose(-2, -1))


def test_dominant_flops_at_2k_for_llama2_7b():
    d, ff, T = 4096, 11008, 2048
    proj, mlp, attn = 8 * d * d, 3 * 2 * d * ff, 4 * T * d
    share = attn / (proj + mlp + attn)
    assert 0.07 < share < 0.085  # "about 8%"
    assert round(proj / 1e6) == 134 and round(mlp / 1e6) == 271 and round(attn / 1e6) == 34


def test_causal_pairs_and_6nd_context_ratio():
    T = 4096
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    assert int(mask.sum()) == T * (T + 1) // 2
    d = 4096
    assert round(4096 / (12 * d), 3) == 0.083  # ~8% at 4k context
    assert round(32768 / (12 * d), 2) == 0.67  # ~67% at 32k
    s, h, a = 2048, 12288, 96
    assert round(34 * s * h / GiB, 2) == 0.80
    assert round(5 * a * s / (34 * h), 2) == 2.35


def test_temperature_limits_and_ranking():
    torch.manual_seed(5)
    z = torch.randn(50, dtype=torch.float64)
    cold = torch.softmax(z / 1e-3, -1)
    assert cold.argmax() == z.argmax() and cold.max() > 1 - 1e-9
    for tau in (0.5, 1.0, 2.0, 10.0):
        p = torch.softmax(z / tau, -1)
        assert torch.equal(p.argsort(), z.argsort())
    hot = torch.softmax(z / 1e6, -1)
    assert torch.allclose(hot, torch.full_like(hot, 1 / 50), atol=1e-6)


def test_speculative_sampling_preserves_target_distribution():
    torch.manual_seed(6)
    p = torch.softmax(torch.randn(10, dtype=torch.float64), -1)
    q = torch.softmax(torch.randn(10, dtype=torch.float64), -1)
    accept = q * torch.clamp(p / q, max=1.0)
    residual = torch.clamp(p - q, min=0.0)
    reject_mass = 1 - torch.minimum(p, q).sum()
    emitted = accept + reject_mass * residual / residual.sum()
    assert torch.allclose(emitted, p, atol=1e-12)
    alpha, gamma = 0.8, 4
    expected = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    assert math.isclose(expected, sum(alpha**i for i in range(gamma + 1)))


def test_numbers_quoted_in_answers(bank):
    quoted = {
        "cx-score-matrix-32k-fp32": ["4,294,967,296", "1,073,741,824", "4 gib", "4.29 gb"],
        "cx-qkt-flops": ["1,073,741,824", "5,368,709,120", "2.5×"],
        "cx-score-memory-llama2-13b": ["1,342,177,280", "50 gib", "53.7 gb"],
        "cx-attention-activation-gpt3": ["2,013,265,920", "1.875 gib", "180 gib"],
        "infer-kv-llama2-7b": ["524,288", "0.5 mib", "2,147,483,648", "2 gib"],
        "infer-kv-llama2-70b-gqa": ["327,680", "320 kib", "1,342,177,280", "1.25 gib", "10 gib"],
        "infer-rolling-buffer-mistral": ["536,870,912", "0.5 gib", "= 4 gib", "128 kib"],
    }
    for qid, needles in quoted.items():
        text = _norm(bank.questions[qid].answer.en)
        for needle in needles:
            assert needle in text, (qid, needle)
    # 32k x 32k fp32 in decimal GB, 96 layers x 1.875 GiB, 32 heads x 4 GiB
    assert round(2**32 / 1e9, 2) == 4.29
    assert 96 * 1.875 == 180
    assert round(40 * 1_342_177_280 / 1e9, 1) == 53.7
    assert round(5 * 2 * 2048**2 * 128 / 1e9, 2) == 5.37


def test_hardware_ratios_quoted():
    assert round(312 / 19.5) == 16  # FA2: non-matmul FLOPs ~16x more expensive on A100
    assert round(312 / 2.039) == 153
    assert round(989 / 3.35) == 295
    assert 81_920 * MiB == 80 * GiB  # an "80 GB" A100/H100 as nvidia-smi reports it
    assert round(6.74e9 * 2 / GiB, 1) == 12.6
    assert round(80 - 6.74e9 * 2 / GiB) == 67
    assert int((80 * GiB - 6.74e9 * 2) / (2 * GiB)) == 33
