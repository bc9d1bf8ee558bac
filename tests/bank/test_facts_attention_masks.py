"""Fact checks for questions/attention-core.yaml and questions/masks.yaml.

Every numeric answer is recomputed from first principles, every shape answer is
compared with the shape real torch code produces, and the checkable claims made in
the prose (mask polarity, NaN behaviour, fp16 range, causal alignment...) are
re-verified against the installed torch.
"""

from __future__ import annotations

import math
import re

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOPICS = {"attention-core": "attn-", "masks": "mask-"}


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of attention-core.yaml and masks.yaml, by id (other files may share the topics)."""
    return {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem in TOPICS}


def q(bank, qid):
    return bank.questions[qid]


def parse_shape(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def close(q_, computed):
    return abs(q_.value - computed) <= q_.tolerance + 1e-12


# --------------------------------------------------------------- structure ---


def test_key_points_have_keywords_and_references(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        for kp in x.key_points:
            assert kp.keywords.en and kp.keywords.zh, x.id
        assert x.references, x.id


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type == "numeric":
            shown = f"{x.value:g}"
            assert shown in x.answer.en and shown in x.answer.zh, (x.id, shown)


def test_shape_answers_appear_in_the_worked_answer(mine):
    for x in mine.values():
        if x.type == "shape":
            want = "[" + ", ".join(str(n) for n in parse_shape(x.shape)) + "]"
            assert want in x.answer.en and want in x.answer.zh, (x.id, want)


# Every numeric and shape question must have a check below; adding one without a check fails.
NUMERIC_CHECKED = {
    "attn-scale-factor-value",
    "attn-dot-product-variance",
    "attn-divide-by-dk",
    "attn-softmax-saturation",
    "attn-score-flops",
    "attn-score-memory",
    "mask-causal-count",
    "mask-after-softmax-renorm",
    "mask-causal-tile-count",
    "attn-softmax-fp16-overflow",
    "mask-prefix-lm-count",
    "mask-flex-block-count",
}
SHAPE_CHECKED = {
    "attn-score-shape-basic",
    "attn-per-head-output-shape",
    "attn-cross-attn-shapes",
    "mask-causal-shape",
    "mask-combined-shape",
    "mask-padding-broadcast-shape",
    "mask-decode-step-shape",
}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


# ----------------------------------------------------------------- numeric ---


def test_scale_factor_value(bank):
    """GQA: 32 query heads and 8 KV heads of width 4096 / 32; the scale is 1/sqrt(128)."""
    x = q(bank, "attn-scale-factor-value")
    d_model, h, h_kv = 4096, 32, 8
    d_k = d_model // h
    assert close(x, math.sqrt(d_k))
    assert not close(x, math.sqrt(d_model // h_kv)) and not close(x, math.sqrt(d_model))  # the traps
    # SDPA's default scale is 1/sqrt(head dim), also with K/V heads shared across query heads.
    torch.manual_seed(0)
    qq = torch.randn(1, h, 5, d_k, dtype=torch.float64)
    kk, vv = (torch.randn(1, h_kv, 5, d_k, dtype=torch.float64).repeat_interleave(h // h_kv, dim=1) for _ in range(2))
    manual = torch.softmax(qq @ kk.transpose(-2, -1) / math.sqrt(d_k), dim=-1) @ vv
    torch.testing.assert_close(F.scaled_dot_product_attention(qq, kk, vv), manual)


def test_dot_product_variance(bank):
    x = q(bank, "attn-dot-product-variance")
    d_k = 128
    per_term = 1.0 * 1.0 - 0.0  # E[q^2]E[k^2] - (E[q]E[k])^2
    assert close(x, d_k * per_term)
    g = torch.Generator().manual_seed(0)
    qs = torch.randn(200_000, d_k, generator=g, dtype=torch.float64)
    ks = torch.randn(200_000, d_k, generator=g, dtype=torch.float64)
    empirical = (qs * ks).sum(-1).var().item()
    assert abs(empirical - x.value) / x.value < 0.02
    # and dividing by sqrt(d_k) brings it back to 1
    assert abs(((qs * ks).sum(-1) / math.sqrt(d_k)).var().item() - 1) < 0.02


def test_divide_by_dk(bank):
    x = q(bank, "attn-divide-by-dk")
    d_k = 64
    assert close(x, math.sqrt(d_k / d_k**2))
    assert close(x, 1 / math.sqrt(d_k))
    g = torch.Generator().manual_seed(1)
    qs = torch.randn(200_000, d_k, generator=g, dtype=torch.float64)
    ks = torch.randn(200_000, d_k, generator=g, dtype=torch.float64)
    empirical = ((qs * ks).sum(-1) / d_k).std().item()
    assert abs(empirical - x.value) < 0.002


def test_softmax_saturation(bank):
    x = q(bank, "attn-softmax-saturation")
    s = torch.tensor([8.0, 0, 0, 0], dtype=torch.float64)
    p = torch.softmax(s, -1)
    assert close(x, p[0].item())
    assert math.isclose(p[0].item(), math.exp(8) / (math.exp(8) + 3))
    jac = torch.diag(p) - torch.outer(p, p)
    assert abs(jac[0, 0].item() - 0.0010) < 0.0001
    assert abs(jac[0, 1].item() - (-0.0003)) < 0.0001
    p_scaled = torch.softmax(s / 8, -1)
    assert abs(p_scaled[0].item() - 0.475) < 0.001
    assert abs((p_scaled[0] * (1 - p_scaled[0])).item() - 0.249) < 0.001


def test_score_flops(bank):
    from torch.utils.flop_counter import FlopCounterMode

    x = q(bank, "attn-score-flops")
    T, d_model, h = 1024, 1024, 16
    d_k = d_model // h
    analytic = 2 * (h * T * T * d_k) * 2  # two matmuls, 2 FLOPs per multiply-add
    assert analytic == 4 * T**2 * d_model
    qq = torch.empty(1, h, T, d_k, device="meta")
    kk = torch.empty(1, h, T, d_k, device="meta")
    vv = torch.empty(1, h, T, d_k, device="meta")
    with FlopCounterMode(display=False) as counter:
        p = qq @ kk.transpose(-2, -1)
        p @ vv
    assert counter.get_total_flops() == analytic
    assert close(x, analytic / 1e9)
    # the comparison in the answer: Q, K, V, O projections = 8 * T * d^2 FLOPs
    assert abs(4 * 2 * T * d_model**2 / 1e9 - 8.59) < 0.01


def test_score_memory(bank):
    x = q(bank, "attn-score-memory")
    probs = torch.empty(1, 32, 8192, 8192, dtype=torch.float16, device="meta")
    nbytes = probs.numel() * probs.element_size()
    assert nbytes == 4_294_967_296
    assert close(x, nbytes / 2**30)


def test_causal_count(bank):
    x = q(bank, "mask-causal-count")
    T = 5
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    assert close(x, allowed.sum().item())
    assert allowed.sum().item() == T * (T + 1) // 2
    assert (~allowed).sum().item() == 10


def test_after_softmax_renorm(bank):
    x = q(bank, "mask-after-softmax-renorm")
    s = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    p = torch.softmax(s, -1)
    assert torch.allclose(p, torch.tensor([0.090, 0.245, 0.665], dtype=torch.float64), atol=5e-4)
    kept = p.clone()
    kept[2] = 0
    assert close(x, kept.sum().item())
    renorm = kept / kept.sum()
    pre = torch.softmax(s.masked_fill(torch.tensor([False, False, True]), float("-inf")), -1)
    torch.testing.assert_close(renorm, pre)
    assert torch.allclose(renorm[:2], torch.tensor([0.269, 0.731], dtype=torch.float64), atol=5e-4)


def test_causal_tile_count(bank):
    x = q(bank, "mask-causal-tile-count")
    T, tile = 4096, 128
    n = T // tile
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    tiles = allowed.view(n, tile, n, tile).permute(0, 2, 1, 3)
    any_allowed = tiles.any(-1).any(-1)
    all_allowed = tiles.all(-1).all(-1)
    assert close(x, any_allowed.sum().item())
    assert any_allowed.sum().item() == n * (n + 1) // 2 == 528
    partial = (any_allowed & ~all_allowed).sum().item()
    assert partial == 32
    assert all_allowed.sum().item() == 496
    assert (~any_allowed).sum().item() == 496


# ------------------------------------------------------------------ shapes ---


def split_heads(x, h):
    B, T, d = x.shape
    return x.view(B, T, h, d // h).transpose(1, 2)


def test_score_shape_basic(bank):
    x = q(bank, "attn-score-shape-basic")
    B, T, d_model, h = 2, 10, 512, 8
    torch.manual_seed(0)
    inp = torch.randn(B, T, d_model)
    Q = split_heads(inp @ torch.randn(d_model, d_model), h)
    K = split_heads(inp @ torch.randn(d_model, d_model), h)
    assert list(Q.shape) == [2, 8, 10, 64]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_model // h)
    assert list(scores.shape) == parse_shape(x.shape)
    mha = torch.nn.MultiheadAttention(d_model, h, batch_first=True)
    _, weights = mha(inp, inp, inp, average_attn_weights=False)
    assert list(weights.shape) == parse_shape(x.shape)


def test_per_head_output_shape(bank):
    x = q(bank, "attn-per-head-output-shape")
    B, T, d_model, h = 4, 16, 768, 12
    torch.manual_seed(0)
    Q, K, V = (split_heads(torch.randn(B, T, d_model), h) for _ in range(3))
    out = F.scaled_dot_product_attention(Q, K, V)
    assert list(out.shape) == parse_shape(x.shape)
    merged = out.transpose(1, 2).reshape(B, T, d_model)
    assert list(merged.shape) == [4, 16, 768]
    plain = torch.softmax(Q @ K.transpose(-2, -1) / 8, -1) @ V  # the plain P @ V from the answer (sqrt(64) = 8)
    torch.testing.assert_close(plain, out)
    with pytest.raises(RuntimeError):
        plain.transpose(1, 2).view(B, T, d_model)  # non-contiguous: view fails, as the answer says
    torch.testing.assert_close(plain.transpose(1, 2).contiguous().view(B, T, d_model), merged)
    # reshaping without the transpose scrambles tokens: token 0's merged vector differs
    wrong = out.reshape(B, T, d_model)
    assert not torch.allclose(wrong[0, 0], merged[0, 0])


def test_cross_attn_shapes(bank):
    x = q(bank, "attn-cross-attn-shapes")
    B, T_dec, T_enc, d_model, h = 4, 7, 12, 256, 4
    torch.manual_seed(0)
    dec, enc = torch.randn(B, T_dec, d_model), torch.randn(B, T_enc, d_model)
    mha = torch.nn.MultiheadAttention(d_model, h, batch_first=True)
    out, weights = mha(dec, enc, enc, average_attn_weights=False)
    assert list(weights.shape) == parse_shape(x.shape)
    assert list(out.shape) == [4, 7, 256]
    assert list(split_heads(dec, h).shape) == [4, 4, 7, 64]
    assert list(split_heads(enc, h).shape) == [4, 4, 12, 64]


def test_causal_shape(bank):
    """Chunked prefill: 4 new queries, 6 cached keys; the triangle is shifted by the cache length."""
    x = q(bank, "mask-causal-shape")
    cached, new = 6, 4
    mask = torch.ones(new, cached + new, dtype=torch.bool).tril(diagonal=cached)
    assert list(mask.shape) == parse_shape(x.shape)
    assert mask[0].sum() == cached + 1 and mask[-1].all()  # the first new token sees keys 0..6
    assert torch.tril(torch.ones(new, cached + new, dtype=torch.bool))[0].sum() == 1  # the top-left trap
    g = torch.Generator().manual_seed(0)
    qs, ks, vs = (torch.randn(1, 2, cached + new, 8, generator=g) for _ in range(3))
    full = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True)[:, :, cached:]
    chunk = F.scaled_dot_product_attention(qs[:, :, cached:], ks, vs, attn_mask=mask)
    assert torch.allclose(full, chunk, atol=1e-6)
    trap = F.scaled_dot_product_attention(qs[:, :, cached:], ks, vs, is_causal=True)
    assert not torch.allclose(full, trap, atol=1e-3)


def test_combined_shape(bank):
    x = q(bank, "mask-combined-shape")
    B, T = 2, 10
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    lengths = torch.tensor([10, 6])
    real = torch.arange(T)[None, :] < lengths[:, None]  # [B, T], True = real token
    combined = causal & real[:, None, None, :]
    assert list(combined.shape) == parse_shape(x.shape)
    # entry [b, 0, i, j] is True iff j <= i and key j of sequence b is real
    i, j = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="ij")
    for b in range(B):
        torch.testing.assert_close(combined[b, 0], (j <= i) & (j < lengths[b]))


def test_padding_broadcast_shape(bank):
    x = q(bank, "mask-padding-broadcast-shape")
    B, h, T = 2, 8, 10
    real = torch.tensor([[True] * 10, [True] * 7 + [False] * 3])
    mask = real[:, None, None, :]
    assert list(mask.shape) == parse_shape(x.shape)
    scores = torch.randn(B, h, T, T)
    p = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
    assert torch.all(p[1, :, :, 7:] == 0)  # no query attends to a pad key
    torch.testing.assert_close(p.sum(-1), torch.ones(B, h, T))
    with pytest.raises(RuntimeError):
        scores.masked_fill(~real, float("-inf"))  # raw [B, T] against [B, h, T, T]: 2 vs 10
    # the silent failure when B == T: the raw mask broadcasts along the query axis instead
    sq = torch.randn(3, 1, 3, 3)
    real3 = torch.tensor([[True, True, False], [True, True, True], [True, True, True]])
    wrong = torch.softmax(sq.masked_fill(~real3, float("-inf")), -1)
    right = torch.softmax(sq.masked_fill(~real3[:, None, None, :], float("-inf")), -1)
    assert not torch.allclose(wrong, right)


def test_decode_step_shape_and_is_causal_trap(bank):
    x = q(bank, "mask-decode-step-shape")
    torch.manual_seed(0)
    qq = torch.randn(2, 8, 1, 64)
    kk, vv = torch.randn(2, 8, 21, 64), torch.randn(2, 8, 21, 64)
    assert list((qq @ kk.transpose(-2, -1)).shape) == parse_shape(x.shape)
    no_mask = F.scaled_dot_product_attention(qq, kk, vv)
    # is_causal=True with T_q=1 is top-left aligned: the query sees key 0 only
    trap = F.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
    torch.testing.assert_close(trap, vv[:, :, :1, :])
    from torch.nn.attention.bias import causal_lower_right

    fixed = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=causal_lower_right(1, 21))
    torch.testing.assert_close(fixed, no_mask)


# -------------------------------------------------- claims made in the prose ---


def test_softmax_axis_is_keys(bank):
    x = q(bank, "attn-softmax-axis")
    assert x.correct == 0
    torch.manual_seed(0)
    qq, kk, vv = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 8)
    s = qq @ kk.transpose(-2, -1) / math.sqrt(8)
    p = torch.softmax(s, dim=-1)
    torch.testing.assert_close(p.sum(-1), torch.ones(2, 3, 4))
    torch.testing.assert_close(F.scaled_dot_product_attention(qq, kk, vv), p @ vv)


def test_qk_dims(bank):
    x = q(bank, "attn-qk-dims")
    assert x.correct_set == {0, 1}

    def attend(n_q, d_q, n_k, d_k, n_v, d_v):
        Q, K, V = torch.randn(n_q, d_q), torch.randn(n_k, d_k), torch.randn(n_v, d_v)
        return torch.softmax(Q @ K.T / math.sqrt(d_k), -1) @ V

    assert list(attend(3, 4, 5, 4, 5, 7).shape) == [3, 7]  # n_q != n_k, d_v != d_k, n_q != n_v: fine
    with pytest.raises(RuntimeError):
        attend(3, 4, 5, 6, 5, 7)  # d_q != d_k
    with pytest.raises(RuntimeError):
        attend(3, 4, 5, 4, 6, 7)  # n_k != n_v


def test_permutation_equivariance(bank):
    x = q(bank, "attn-permutation-equivariance")
    assert x.correct == 0
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    inp = torch.randn(1, 6, 16)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    out, _ = mha(inp, inp, inp)
    out_p, _ = mha(inp[:, perm], inp[:, perm], inp[:, perm])
    torch.testing.assert_close(out_p, out[:, perm])
    # a causal mask breaks the symmetry
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), 1)  # MHA: True = masked out
    out_c, _ = mha(inp, inp, inp, attn_mask=causal)
    out_cp, _ = mha(inp[:, perm], inp[:, perm], inp[:, perm], attn_mask=causal)
    assert not torch.allclose(out_cp, out_c[:, perm])


def test_shared_qk_claims(bank):
    x = q(bank, "attn-shared-qk-symmetric")
    assert x.correct_set == {0, 1, 3}
    torch.manual_seed(0)
    X, W = torch.randn(7, 16, dtype=torch.float64), torch.randn(16, 8, dtype=torch.float64)
    S = (X @ W) @ (X @ W).T
    torch.testing.assert_close(S, S.T)
    diag = S.diagonal()
    assert torch.all(S <= torch.maximum(diag[:, None], diag[None, :]) + 1e-9)
    P = torch.softmax(S / math.sqrt(8), -1)
    assert not torch.allclose(P, P.T)
    # separate W_Q, W_K: generally asymmetric
    S2 = (X @ W) @ (X @ torch.randn(16, 8, dtype=torch.float64)).T
    assert not torch.allclose(S2, S2.T)


def test_temperature_limits(bank):
    x = q(bank, "attn-temperature-limits")
    assert x.correct == 0
    s = torch.tensor([1.0, 3.0, 2.0], dtype=torch.float64)
    torch.testing.assert_close(torch.softmax(s / 1e-3, -1), torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64))
    torch.testing.assert_close(torch.softmax(s / 1e6, -1), torch.full((3,), 1 / 3, dtype=torch.float64), atol=1e-5, rtol=0)
    ties = torch.tensor([2.0, 2.0, 0.0], dtype=torch.float64)
    torch.testing.assert_close(torch.softmax(ties / 1e-3, -1), torch.tensor([0.5, 0.5, 0.0], dtype=torch.float64))


def test_wrong_softmax_axis_leaks_future(bank):
    q(bank, "attn-softmax-wrong-axis")
    torch.manual_seed(0)
    T, d = 6, 8
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def decoder(x, dim):
        s = (x @ x.T / math.sqrt(d)).masked_fill(~causal, float("-inf"))
        return torch.softmax(s, dim=dim) @ x

    x = torch.randn(T, d)
    x2 = x.clone()
    x2[5] += 3.0  # perturb the last (future) token
    assert torch.allclose(decoder(x, -1)[:5], decoder(x2, -1)[:5])  # correct axis: no leak
    assert not torch.allclose(decoder(x, -2)[:5], decoder(x2, -2)[:5])  # wrong axis: earlier outputs change
    assert not torch.allclose(torch.softmax(x @ x.T, dim=-2).sum(-1), torch.ones(T))


def test_mask_polarity_sdpa_vs_mha(bank):
    x = q(bank, "mask-sdpa-vs-mha-polarity")
    assert x.correct == 0
    torch.manual_seed(0)
    E, h, T = 8, 2, 5
    mha = torch.nn.MultiheadAttention(E, h, batch_first=True)
    inp = torch.randn(1, T, E)
    pad = torch.tensor([[False, False, False, True, True]])  # True = padding
    _, w = mha(inp, inp, inp, key_padding_mask=pad)
    assert torch.all(w[..., 3:] == 0) and torch.all(w[..., :3] > 0)  # MHA: True = masked out
    qq, kk, vv = torch.randn(1, 1, T, 4), torch.randn(1, 1, T, 4), torch.randn(1, 1, T, 4)
    allowed = ~pad[:, None, None, :]
    ref = torch.softmax((qq @ kk.transpose(-2, -1) / 2).masked_fill(~allowed, float("-inf")), -1) @ vv
    torch.testing.assert_close(F.scaled_dot_product_attention(qq, kk, vv, attn_mask=allowed), ref)  # SDPA: True = attend
    # passing the padding mask uninverted silently attends only to the pads
    only_pads = torch.softmax((qq @ kk.transpose(-2, -1) / 2).masked_fill(~pad[:, None, None, :], float("-inf")), -1) @ vv
    torch.testing.assert_close(F.scaled_dot_product_attention(qq, kk, vv, attn_mask=pad[:, None, None, :]), only_pads)


def test_fully_masked_rows(bank):
    x = q(bank, "mask-sdpa-fully-masked-behavior")
    assert x.correct == 0
    torch.manual_seed(0)
    qq, kk, vv = torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)
    allowed = torch.ones(3, 3, dtype=torch.bool)
    allowed[1] = False  # query 1 may attend to nothing
    s = qq @ kk.transpose(-2, -1) / 2
    a = torch.softmax(s.masked_fill(~allowed, float("-inf")), -1) @ vv
    assert torch.isnan(a[0, 0, 1]).all()
    b = torch.softmax(s.masked_fill(~allowed, -1e9), -1) @ vv
    torch.testing.assert_close(b[0, 0, 1], vv[0, 0].mean(0))  # uniform average of all values
    c = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=allowed)
    assert torch.all(c[0, 0, 1] == 0)
    torch.testing.assert_close(c[0, 0, [0, 2]], a[0, 0, [0, 2]])
    # nn.MultiheadAttention with every key padded still gives NaN on its default path
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    inp = torch.randn(1, 4, 8)
    out, _ = mha(inp, inp, inp, key_padding_mask=torch.ones(1, 4, dtype=torch.bool))
    assert torch.isnan(out).all()


def test_fp16_and_large_negative_fill(bank):
    x = q(bank, "mask-fp16-neg-inf")
    assert x.correct == 0
    assert torch.finfo(torch.float16).max == 65504
    assert torch.finfo(torch.float16).min == -65504
    assert torch.tensor(-1e9).to(torch.float16).item() == float("-inf")
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(3, dtype=torch.float16).masked_fill(torch.tensor([False, True, True]), -1e9)
    bf = torch.tensor(-1e9).to(torch.bfloat16).item()
    assert math.isfinite(bf) and abs(bf - (-9.98e8)) < 1e6
    assert torch.tensor(float("-inf"), dtype=torch.float16).item() == float("-inf")
    assert abs(torch.finfo(torch.float32).min - (-3.4e38)) < 0.01e38
    filled = torch.zeros(3, dtype=torch.float16).masked_fill(torch.tensor([False, True, True]), torch.finfo(torch.float16).min)
    torch.testing.assert_close(torch.softmax(filled.float(), -1), torch.tensor([1.0, 0.0, 0.0]))


def test_additive_mask_overflow(bank):
    q(bank, "mask-additive-overflow")
    for dtype in (torch.float16, torch.float32):
        m = torch.tensor(torch.finfo(dtype).min, dtype=dtype)
        assert (m + m).item() == float("-inf")
        assert (m + m).clamp(min=torch.finfo(dtype).min).item() == torch.finfo(dtype).min
    assert -65504 + -65504 == -131008
    h = torch.float16
    m16 = torch.finfo(h).min
    # score + mask in fp16: -15 survives, -16 and below round to -inf
    assert (torch.tensor(-15.0, dtype=h) + m16).item() == m16
    assert (torch.tensor(-16.0, dtype=h) + m16).item() == float("-inf")
    # left padding [pad, pad, real] + causal: query 0 (a pad) has no allowed key -> a fully masked row
    causal_add = torch.tensor([0.0, m16, m16], dtype=h)  # keys 1, 2 are in query 0's future
    pad_add = torch.tensor([m16, m16, 0.0], dtype=h)  # keys 0, 1 are pads
    mask_row = causal_add + pad_add
    assert mask_row.tolist() == [m16, float("-inf"), m16]  # key 1 is doubly blocked
    mild = torch.tensor([-3.0, -1.0, 2.0], dtype=h) + mask_row
    assert torch.isfinite(torch.softmax(mild.float(), -1)).all()  # still finite: no NaN
    negative = torch.tensor([-20.0, -1.0, -30.0], dtype=h) + mask_row
    assert torch.isneginf(negative).all()  # negative-enough scores: the whole row overflows
    assert torch.isnan(torch.softmax(negative.float(), -1)).all()  # ... and softmax gives NaN
    # fix 1: combine as booleans, then masked_fill (replaces, does not add) once
    allowed = torch.tensor([True, False, False]) & torch.tensor([False, False, True])
    once = torch.tensor([-20.0, -1.0, -30.0], dtype=h).masked_fill(~allowed, m16)
    assert torch.isfinite(torch.softmax(once.float(), -1)).all()
    # fix 2: clamp after adding (the torch.max trick)
    clamped = torch.max(negative, torch.tensor(m16, dtype=h))
    assert torch.isfinite(torch.softmax(clamped.float(), -1)).all()


def test_combine_masks(bank):
    x = q(bank, "mask-combine")
    assert x.correct_set == {0, 1, 2}
    T = 4
    causal_ok = torch.tril(torch.ones(T, T, dtype=torch.bool))
    pad_ok = torch.tensor([True, True, True, False])[None, :]
    allowed = causal_ok & pad_ok
    blocked = (~causal_ok) | (~pad_ok)
    assert torch.equal(allowed, ~blocked)  # De Morgan
    to_add = lambda ok: torch.zeros(ok.shape).masked_fill(~ok, float("-inf"))  # noqa: E731
    assert torch.equal(to_add(causal_ok) + to_add(pad_ok.expand(T, T)), to_add(allowed))
    assert not torch.equal(causal_ok | pad_ok, allowed)  # OR of allow-masks lets future tokens through
    assert math.isnan(0.0 * float("-inf")) and float("-inf") * float("-inf") == float("inf")


def test_is_causal_alignment(bank):
    x = q(bank, "mask-is-causal-alignment")
    assert x.correct == 0
    from torch.nn.attention.bias import causal_lower_right

    torch.manual_seed(0)
    L, S = 4, 10
    qq, kk, vv = torch.randn(1, 1, L, 8), torch.randn(1, 1, S, 8), torch.randn(1, 1, S, 8)
    s = qq @ kk.transpose(-2, -1) / math.sqrt(8)
    top_left = torch.softmax(s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf")), -1) @ vv
    got = F.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
    torch.testing.assert_close(got, top_left)
    last_row_keys_0_3 = torch.softmax(s[..., 3, :4], -1) @ vv[0, 0, :4]
    torch.testing.assert_close(got[..., 3, :], last_row_keys_0_3)
    lower_right = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=causal_lower_right(L, S))
    torch.testing.assert_close(lower_right[..., 3, :], torch.softmax(s[..., 3, :], -1) @ vv[0, 0])


def test_left_pad_position_ids_and_rope_shift(bank):
    q(bank, "mask-left-pad-position-ids")
    attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    pos = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)
    assert pos.tolist() == [[1, 1, 0, 1, 2], [0, 1, 2, 3, 4]]

    # RoPE: scores depend only on relative offsets, so a constant shift leaves them unchanged (up to rounding)
    def rope(x, positions, base=10000.0):
        d = x.shape[-1]
        inv = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        ang = positions[:, None].double() * inv[None, :]
        cos, sin = ang.cos(), ang.sin()
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2], out[..., 1::2] = x1 * cos - x2 * sin, x1 * sin + x2 * cos
        return out

    torch.manual_seed(0)
    qx, kx = torch.randn(5, 16, dtype=torch.float64), torch.randn(5, 16, dtype=torch.float64)
    p0 = torch.arange(5)
    s0 = rope(qx, p0) @ rope(kx, p0).T
    s3 = rope(qx, p0 + 3) @ rope(kx, p0 + 3).T
    torch.testing.assert_close(s0, s3, rtol=0, atol=1e-12)
    # learned absolute positions: a shift changes the inputs themselves
    table = torch.randn(16, 16, dtype=torch.float64)
    assert not torch.allclose(qx + table[p0], qx + table[p0 + 3])


def test_zeroing_after_softmax_leaks_the_future(bank):
    """mask-before-softmax: without renormalising, row i's output depends on the masked future keys."""
    q(bank, "mask-before-softmax")
    torch.manual_seed(0)
    T, d = 5, 8
    qx, kx, vx = (torch.randn(T, d, dtype=torch.float64) for _ in range(3))
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def zero_after(k):
        return (torch.softmax(qx @ k.T, -1) * causal) @ vx

    def mask_before(k):
        return torch.softmax((qx @ k.T).masked_fill(~causal, float("-inf")), -1) @ vx

    k2 = kx.clone()
    k2[-1] += 3.0  # change only the last (future, for rows 0..T-2) token's key
    assert not torch.allclose(zero_after(kx)[0], zero_after(k2)[0])  # row 0 sees the future
    torch.testing.assert_close(mask_before(kx)[:-1], mask_before(k2)[:-1])  # masking first does not
    rows = (torch.softmax(qx @ kx.T, -1) * causal).sum(-1)
    assert (rows[:-1] < 1).all() and math.isclose(rows[-1].item(), 1.0)


def test_right_padding_is_hidden_by_the_causal_mask(bank):
    """mask-causal-vs-padding: with right padding, causal masking alone keeps real tokens off the pads."""
    q(bank, "mask-causal-vs-padding")
    torch.manual_seed(0)
    T, real, d = 6, 4, 8
    qx, kx, vx = (torch.randn(1, 1, T, d, dtype=torch.float64) for _ in range(3))
    pad = torch.arange(T) < real
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    both = F.scaled_dot_product_attention(qx, kx, vx, attn_mask=causal & pad[None, :])
    only_causal = F.scaled_dot_product_attention(qx, kx, vx, is_causal=True)
    torch.testing.assert_close(both[..., :real, :], only_causal[..., :real, :])
    # with left padding the same shortcut fails: real tokens would read the leading pads
    left = torch.arange(T) >= T - real
    both_left = F.scaled_dot_product_attention(qx, kx, vx, attn_mask=causal & left[None, :])
    assert not torch.allclose(both_left[..., -real:, :], only_causal[..., -real:, :])


def test_padding_on_key_axis_is_enough(bank):
    x = q(bank, "mask-padding-key-axis")
    assert x.correct == 0
    torch.manual_seed(0)
    T, d = 6, 8
    real = torch.tensor([True] * 4 + [False] * 2)
    qq, kk, vv = torch.randn(1, 1, T, d), torch.randn(1, 1, T, d), torch.randn(1, 1, T, d)
    out = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=real[None, None, None, :])
    kk2, vv2 = kk.clone(), vv.clone()
    kk2[..., 4:, :] += 5
    vv2[..., 4:, :] -= 5  # change the pads' keys and values
    out2 = F.scaled_dot_product_attention(qq, kk2, vv2, attn_mask=real[None, None, None, :])
    torch.testing.assert_close(out[..., :4, :], out2[..., :4, :])  # real tokens unaffected
    assert torch.isfinite(out).all()  # pad query rows are finite (they still see real keys)


def test_cross_attention_cache_is_reusable(bank):
    q(bank, "attn-cross-attn-kv-cache")
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    enc = torch.randn(1, 5, 16)
    dec = torch.randn(1, 3, 16)
    full, _ = mha(dec, enc, enc)
    step = torch.cat([mha(dec[:, t : t + 1], enc, enc)[0] for t in range(3)], dim=1)
    torch.testing.assert_close(full, step)  # each decoder step needs only its own query


def test_kv_cache_matches_full_causal_pass(bank):
    q(bank, "attn-decoding-still-serial")
    q(bank, "mask-causal-why-training")
    torch.manual_seed(0)
    T, d = 7, 8
    qq, kk, vv = torch.randn(1, 1, T, d), torch.randn(1, 1, T, d), torch.randn(1, 1, T, d)
    full = F.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
    steps = [F.scaled_dot_product_attention(qq[..., t : t + 1, :], kk[..., : t + 1, :], vv[..., : t + 1, :]) for t in range(T)]
    torch.testing.assert_close(full, torch.cat(steps, dim=-2))


# ------------------------------------------------------ attention deepening ---


def test_fp16_softmax_overflow(bank):
    x = q(bank, "attn-softmax-fp16-overflow")
    assert close(x, math.log(torch.finfo(torch.float16).max))
    half = torch.float16
    assert torch.isfinite(torch.exp(torch.tensor(11.0859375, dtype=half))) and torch.exp(torch.tensor(11.0859375, dtype=half)).item() == 65248
    assert torch.tensor(11.09, dtype=half).item() == 11.09375 and torch.isinf(torch.exp(torch.tensor(11.09, dtype=half)))
    s = torch.tensor([20.0, 0.0, -5.0], dtype=half)
    naive = torch.exp(s) / torch.exp(s).sum()
    assert torch.isnan(naive[0])  # inf / inf
    stable = torch.exp(s - s.max()) / torch.exp(s - s.max()).sum()
    torch.testing.assert_close(stable.float(), torch.softmax(s.float(), -1), atol=1e-3, rtol=1e-3)
    assert round(math.log(torch.finfo(torch.bfloat16).max), 1) == 88.7


def test_softmax_vs_sigmoid_claims(bank):
    q(bank, "attn-softmax-not-sigmoid")
    torch.manual_seed(0)
    for n in (16, 1024):
        s = torch.randn(n) * 0.1
        assert math.isclose(torch.softmax(s, -1).sum().item(), 1.0, rel_tol=1e-5)
        assert torch.sigmoid(s).sum().item() == pytest.approx(n / 2, rel=0.1)  # grows with n, ~0.5 each at init
        assert torch.sigmoid(s - math.log(n)).sum().item() == pytest.approx(1.0, rel=0.1)  # the -log(n) bias
    raised = torch.tensor([1.0, 2.0, 3.0])
    bumped = raised.clone()
    bumped[2] += 1
    assert (torch.softmax(bumped, -1)[:2] < torch.softmax(raised, -1)[:2]).all()  # keys compete
    assert torch.equal(torch.sigmoid(bumped)[:2], torch.sigmoid(raised)[:2])  # sigmoid weights do not


def test_wo_folds_for_one_head_but_not_for_several(bank):
    q(bank, "attn-what-wo-does")
    torch.manual_seed(0)
    T, d, h = 5, 8, 2
    x = torch.randn(T, d, dtype=torch.float64)
    w_v, w_o = torch.randn(d, d, dtype=torch.float64), torch.randn(d, d, dtype=torch.float64)
    p = torch.softmax(torch.randn(T, T, dtype=torch.float64), -1)
    torch.testing.assert_close((p @ x @ w_v) @ w_o, p @ x @ (w_v @ w_o))  # one head: fold W_V W_O
    dv = d // h
    ps = [torch.softmax(torch.randn(T, T, dtype=torch.float64), -1) for _ in range(h)]
    heads = torch.cat([ps[i] @ x @ w_v[:, i * dv : (i + 1) * dv] for i in range(h)], dim=-1)
    per_head = sum(ps[i] @ x @ w_v[:, i * dv : (i + 1) * dv] @ w_o[i * dv : (i + 1) * dv] for i in range(h))
    torch.testing.assert_close(heads @ w_o, per_head)  # W_O splits into per-head OV circuits
    ov = w_v[:, :dv] @ w_o[:dv]
    assert ov.shape == (d, d) and torch.linalg.matrix_rank(ov) <= dv


def test_sdpa_backends_and_math_reference(bank):
    """The enums and context manager exist; on CPU the math path equals the documented reference."""
    q(bank, "attn-sdpa-backend")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
        assert hasattr(SDPBackend, name)
    assert callable(torch.backends.cuda.can_use_flash_attention)
    torch.manual_seed(0)
    qq, kk, vv = (torch.randn(2, 2, 6, 8) for _ in range(3))
    bias = torch.zeros(2, 1, 6, 6)
    bias[..., -2:] = float("-inf")  # padding biases on the last two keys
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=bias)
    ref = torch.softmax(qq @ kk.transpose(-2, -1) / math.sqrt(8) + bias, -1) @ vv
    torch.testing.assert_close(out, ref)


def test_hybrid_cache_share(bank):
    q(bank, "attn-linear-ssm-hybrids")
    layers, attention_every = 32, 8
    assert (layers // attention_every) / layers == 1 / 8


def test_prefix_lm_count(bank):
    x = q(bank, "mask-prefix-lm-count")
    T, P = 8, 4
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    allowed = (j <= i) | (j < P)
    assert close(x, allowed.sum().item())
    assert allowed.sum().item() == T * (T + 1) // 2 + P * (P - 1) // 2 == 42
    assert torch.equal(allowed[P:], (j <= i)[P:])  # rows after the prefix are plain causal


def test_flex_block_count(bank):
    x = q(bank, "mask-flex-block-count")
    T, B, W = 4096, 128, 1024
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    allowed = (i >= j) & (i - j < W)
    blocks = allowed.view(T // B, B, T // B, B).permute(0, 2, 1, 3).flatten(2)
    nonempty, full = blocks.any(-1), blocks.all(-1)
    assert close(x, nonempty.sum().item())
    assert full.sum().item() == 196 and (nonempty & ~full).sum().item() == 56
    assert round(100 * (1 - 252 / 1024), 1) == 75.4
    from torch.nn.attention.flex_attention import create_block_mask

    bm = create_block_mask(lambda b, h, qi, ki: (qi >= ki) & (qi - ki < W), None, None, T, T, device="cpu")
    assert bm.kv_num_blocks.sum().item() == 56 and bm.full_kv_num_blocks.sum().item() == 196


def test_attention_backward_derivation(bank):
    """The hand-derived gradients equal autograd's; D_i = dO_i . O_i; rows of dS sum to 0."""
    q(bank, "attn-backward-derivation")
    torch.manual_seed(0)
    Tq, Tk, d, dv = 5, 7, 8, 6
    Q, K = torch.randn(Tq, d, dtype=torch.float64, requires_grad=True), torch.randn(Tk, d, dtype=torch.float64, requires_grad=True)
    V = torch.randn(Tk, dv, dtype=torch.float64, requires_grad=True)
    S = Q @ K.T / math.sqrt(d)
    P = torch.softmax(S, -1)
    O = P @ V
    dO = torch.randn(Tq, dv, dtype=torch.float64)
    O.backward(dO)
    P, O = P.detach(), O.detach()
    dV = P.T @ dO
    dP = dO @ V.detach().T
    D = (dO * O).sum(-1, keepdim=True)
    torch.testing.assert_close(D, (P * dP).sum(-1, keepdim=True))
    dS = P * (dP - D)
    torch.testing.assert_close(dS.sum(-1), torch.zeros(Tq, dtype=torch.float64))
    torch.testing.assert_close(dV, V.grad)
    torch.testing.assert_close(dS @ K.detach() / math.sqrt(d), Q.grad)
    torch.testing.assert_close(dS.T @ Q.detach() / math.sqrt(d), K.grad)
    jac = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), S.detach()[0])
    torch.testing.assert_close(jac, torch.diag(P[0]) - torch.outer(P[0], P[0]))
