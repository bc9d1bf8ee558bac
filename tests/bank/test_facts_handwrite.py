"""The "hand-write it" questions: one per whiteboard task, at the task's level, and the claims their sketches make.

Each sketch is run here in plain torch: the grader's own solutions are what `drill whiteboard TASK` checks,
so these tests only re-verify what the prose says (shapes, head mapping, mask alignment, RoPE conventions).
"""

from __future__ import annotations

import math
import re
import warnings

import pytest

from drill.whiteboard import catalog

torch = pytest.importorskip("torch")
F = torch.nn.functional

TASK_FILES = {  # the subject file each task's question lives in
    "sdpa": "attention-core", "cross": "attention-core", "mha": "multi-head", "gqa": "multi-head",
    "causal": "masks", "padding": "masks", "kv_cache": "inference", "flash": "flash-attention",
    "rope": "position", "block": "transformer-block", "softmax": "attention-core",
    "attention_backward": "attention-core", "sliding_window": "masks", "flash_decoding": "flash-attention",
    "paged_attention": "inference", "mla": "multi-head", "sinusoidal": "position", "alibi": "position",
    "layernorm": "transformer-block", "rmsnorm": "transformer-block", "swiglu": "transformer-block",
}  # fmt: skip


@pytest.fixture(scope="module")
def handwrite(bank):
    """task id -> its question: the one tagged hand-write whose answer points to `drill whiteboard TASK`."""
    found = {}
    for qid, q in bank.questions.items():
        if "hand-write" in q.tags:
            tasks = set(re.findall(r"drill whiteboard (\w+)", q.answer.en))
            assert len(tasks) == 1 and tasks == set(re.findall(r"drill whiteboard (\w+)", q.answer.zh)), qid
            (task,) = tasks
            assert task not in found, (task, qid, found.get(task))
            found[task] = q
    return found


def test_one_question_per_whiteboard_task_at_its_level_in_its_file(bank, handwrite):
    exercises = catalog.load()
    assert set(TASK_FILES) <= set(handwrite) <= set(exercises)  # tasks of other topics' files may add theirs
    for task, q in handwrite.items():
        assert q.level == exercises[task].level, task
        if task in TASK_FILES:
            assert bank.origins[q.id][0].stem == TASK_FILES[task], task
        assert q.type == "open" and q.references, task


def test_dot_T_reverses_every_dim_of_a_batched_tensor():
    """sdpa pitfall: `k.T` on [..., Tk, d] is not the transpose of the last two dims."""
    k = torch.randn(2, 3, 5, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates .T on tensors that are not 2-D
        assert k.T.shape == (7, 5, 3, 2)
    assert k.transpose(-2, -1).shape == (2, 3, 7, 5)


def test_sdpa_sketch_matches_pytorch():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 3)
    mask = torch.rand(5, 6) > 0.3
    mask[:, 0] = True
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).masked_fill(~mask, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v
    assert out.shape == (2, 4, 5, 3)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_gqa_repeat_interleave_maps_head_h_to_kv_head_h_div_g():
    n_heads, n_kv = 8, 2
    G = n_heads // n_kv
    kv = torch.arange(n_kv).view(1, n_kv, 1, 1).float()
    interleaved = kv.repeat_interleave(G, dim=1).flatten().tolist()
    repeated = kv.repeat(1, G, 1, 1).flatten().tolist()
    assert interleaved == [h // G for h in range(n_heads)]
    assert repeated == [h % n_kv for h in range(n_heads)] != interleaved
    torch.manual_seed(0)
    q, k, v = torch.randn(1, n_heads, 5, 4), torch.randn(1, n_kv, 5, 4), torch.randn(1, n_kv, 5, 4)
    expanded = F.scaled_dot_product_attention(q, k.repeat_interleave(G, 1), v.repeat_interleave(G, 1))
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), expanded)


def test_padding_sketch_never_leaves_an_empty_row():
    lengths, T = torch.tensor([3, 5, 1]), 5
    keys = torch.arange(T)[None, :] < lengths[:, None]
    mask = keys[:, None, None, :].expand(-1, 1, T, T)
    assert mask.shape == (3, 1, T, T)
    causal = mask & torch.tril(torch.ones(T, T, dtype=torch.bool))
    assert mask.any(-1).all() and causal.any(-1).all()
    assert causal[0, 0, 4].tolist() == [True, True, True, False, False]  # a pad query row sees the real keys


def test_kv_cache_sketch_reproduces_a_full_causal_pass():
    torch.manual_seed(0)
    P, n, d = 5, 3, 8
    q, k, v = (torch.randn(1, 2, P + n, d, dtype=torch.float64) for _ in range(3))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    allowed = torch.ones(n, P + n, dtype=torch.bool).tril(diagonal=P)
    chunk = F.scaled_dot_product_attention(q[:, :, P:], k, v, attn_mask=allowed)
    torch.testing.assert_close(chunk, full[:, :, P:])
    steps = [F.scaled_dot_product_attention(q[:, :, t : t + 1], k[:, :, : t + 1], v[:, :, : t + 1]) for t in range(P + n)]
    torch.testing.assert_close(torch.cat(steps, dim=2), full)


def test_flash_sketch_is_exact_with_a_short_tail_block():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 7, 8, dtype=torch.float64), torch.randn(2, 70, 8, dtype=torch.float64), torch.randn(2, 70, 8, dtype=torch.float64)
    scale, block = 1 / math.sqrt(8), 32
    m = torch.full((2, 7), float("-inf"), dtype=torch.float64)
    l = torch.zeros(2, 7, dtype=torch.float64)
    acc = torch.zeros(2, 7, 8, dtype=torch.float64)
    for start in range(0, 70, block):  # the last block has 6 keys
        kb, vb = k[:, start : start + block], v[:, start : start + block]
        s = q @ kb.transpose(-2, -1) * scale
        m_new = torch.maximum(m, s.amax(-1))
        c = torch.exp(m - m_new)
        p = torch.exp(s - m_new[..., None])
        l = l * c + p.sum(-1)
        acc = acc * c[..., None] + p @ vb
        m = m_new
    torch.testing.assert_close(acc / l[..., None], F.scaled_dot_product_attention(q, k, v))
    assert torch.isnan(torch.tensor(float("-inf")) - torch.tensor(float("-inf")))  # the fully masked row trap


def rope_half(x, positions, base=10000.0):
    d = x.shape[-1]
    inv = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = positions[:, None].double() * inv[None, :]
    assert ang.shape == (len(positions), d // 2)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def rope_interleaved(x, positions, base=10000.0):
    d = x.shape[-1]
    inv = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = positions[:, None].double() * inv[None, :]
    cos, sin = ang.cos(), ang.sin()
    out = torch.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def test_rope_sketch_is_relative_and_the_conventions_differ_by_a_permutation():
    torch.manual_seed(0)
    d, T = 16, 6
    x = torch.randn(1, 2, T, d, dtype=torch.float64)
    pos = torch.arange(T)
    # q_m . k_n depends only on m - n
    qv, kv = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    def score(m, n):
        return (rope_half(qv, torch.tensor([m]))[0] @ rope_half(kv, torch.tensor([n]))[0]).item()
    assert math.isclose(score(7, 3), score(104, 100), rel_tol=1e-9)
    # interleaved = rotate-half on features permuted so that pair (2i, 2i+1) becomes (i, i + d/2)
    perm = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
    inverse = torch.argsort(perm)
    torch.testing.assert_close(rope_interleaved(x, pos), rope_half(x[..., perm], pos)[..., inverse])
    assert not torch.allclose(rope_interleaved(x, pos), rope_half(x, pos))


def test_block_sketch_pre_ln_keeps_an_identity_path():
    torch.manual_seed(0)
    d = 8
    ln1, ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
    attn = torch.nn.Linear(d, d)  # stands in for the sub-layers: only the wiring is under test
    mlp = torch.nn.Sequential(torch.nn.Linear(d, 32), torch.nn.GELU(), torch.nn.Linear(32, d))
    for layer in (attn, mlp[2]):
        torch.nn.init.zeros_(layer.weight)
        torch.nn.init.zeros_(layer.bias)
    x = torch.randn(2, 3, d)
    y = x + attn(ln1(x))
    y = y + mlp(ln2(y))
    torch.testing.assert_close(y, x)  # zero branches: Pre-LN is the identity
    post = ln1(x + attn(x))
    assert not torch.allclose(post, x)  # Post-LN normalises the stream itself
    assert torch.allclose(ln1(x).mean(-1), torch.zeros(2, 3), atol=1e-6)  # LayerNorm over the last dim


def get_slopes(n):
    """The ALiBi paper's reference slopes (Press et al., attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def test_alibi_sketch_slopes_and_bias():
    assert get_slopes(8) == [2 ** (-8 * h / 8) for h in range(1, 9)]
    assert get_slopes(12) == pytest.approx([2.0**-k for k in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5])
    T, m = 6, torch.tensor(get_slopes(8))
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    bias = -m[:, None, None] * (i - j).abs()
    assert bias.shape == (8, T, T)
    causal = j <= i
    bloom = (m[:, None, None] * j).expand(8, T, T)
    s = torch.randn(8, T, T)
    torch.testing.assert_close(torch.softmax((s + bias).masked_fill(~causal, float("-inf")), -1),
                               torch.softmax((s + bloom).masked_fill(~causal, float("-inf")), -1))  # fmt: skip


def test_sliding_window_sketch_and_the_off_by_one():
    T, window = 8, 3
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    allowed = (j <= i) & (j > i - window)
    assert allowed.sum(-1).tolist() == [1, 2, 3, 3, 3, 3, 3, 3] and allowed.diagonal().all()
    assert ((j <= i) & (j >= i - window)).sum(-1).max() == window + 1
    assert torch.equal((j <= i) & (j > i - T), j <= i)  # window >= T is plain causal


def test_split_kv_merge_is_exact():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 1, 16, dtype=torch.float64), torch.randn(2, 37, 16, dtype=torch.float64), torch.randn(2, 37, 8, dtype=torch.float64)
    n = 4
    c = math.ceil(37 / n)
    outs, lses = [], []
    for start in range(0, 37, c):
        s = q @ k[:, start : start + c].transpose(-2, -1) / math.sqrt(16)
        lses.append(torch.logsumexp(s, -1))
        outs.append(torch.softmax(s, -1) @ v[:, start : start + c])
    L_all = torch.stack(lses, -1)
    w = torch.exp(L_all - torch.logsumexp(L_all, -1, keepdim=True))
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 1, dtype=torch.float64))
    merged = sum(w[..., ci : ci + 1] * o for ci, o in enumerate(outs))
    torch.testing.assert_close(merged, F.scaled_dot_product_attention(q, k, v))
    assert not torch.allclose(sum(outs) / len(outs), merged)  # the unweighted average is wrong


def test_paged_gather_ignores_garbage_only_with_where():
    torch.manual_seed(0)
    H, D, bs = 2, 4, 4
    k_cache = torch.full((6, bs, H, D), float("nan"))
    v_cache = torch.full((6, bs, H, D), float("nan"))
    keys, values = torch.randn(6, H, D), torch.randn(6, H, D)  # one sequence of 6 tokens in blocks 3, 1
    table = torch.tensor([3, 1, 5])
    t = torch.arange(6)
    k_cache[table[t // bs], t % bs], v_cache[table[t // bs], t % bs] = keys, values
    q = torch.randn(H, D)
    L = 6
    k = k_cache[table[t // bs], t % bs]
    p = torch.softmax(torch.einsum("hd,lhd->hl", q, k) / math.sqrt(D), -1)
    out = torch.einsum("hl,lhd->hd", p, v_cache[table[t // bs], t % bs])
    ref = F.scaled_dot_product_attention(q[:, None], keys.transpose(0, 1), values.transpose(0, 1))[:, 0]
    torch.testing.assert_close(out, ref)
    # padded to 8 positions: slots 6, 7 are NaN garbage; a zero weight times NaN is still NaN
    tp = torch.arange(8)
    kp, vp = k_cache[table[tp // bs], tp % bs], v_cache[table[tp // bs], tp % bs]
    valid = tp < L
    s = torch.einsum("hd,lhd->hl", q, torch.where(valid[:, None, None], kp, 0.0)) / math.sqrt(D)
    pp = torch.softmax(s.masked_fill(~valid, float("-inf")), -1)
    assert torch.isnan(torch.einsum("hl,lhd->hd", pp, vp)).all()
    torch.testing.assert_close(torch.einsum("hl,lhd->hd", pp, torch.where(valid[:, None, None], vp, 0.0)), ref)


def test_mla_absorption_gives_the_same_scores():
    torch.manual_seed(0)
    d_model, H, d_latent, T = 16, 2, 6, 5
    hd = d_model // H
    w_q, w_uk = torch.randn(d_model, d_model, dtype=torch.float64), torch.randn(d_model, d_latent, dtype=torch.float64)
    x, c = torch.randn(T, d_model, dtype=torch.float64), torch.randn(T, d_latent, dtype=torch.float64)
    q = (x @ w_q.T).view(T, H, hd).transpose(0, 1)
    k = (c @ w_uk.T).view(T, H, hd).transpose(0, 1)
    plain = q @ k.transpose(-2, -1)
    absorbed = torch.stack([x @ (w_uk[h * hd : (h + 1) * hd].T @ w_q[h * hd : (h + 1) * hd]).T @ c.T for h in range(H)])
    torch.testing.assert_close(plain, absorbed)
    assert d_latent < 2 * H * hd  # the cache per token per layer


def test_norm_and_swiglu_sketches():
    torch.manual_seed(0)
    x = torch.randn(3, 5, 8)
    w, b = torch.randn(8), torch.randn(8)
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    torch.testing.assert_close((x - mean) / torch.sqrt(var + 1e-5) * w + b, F.layer_norm(x, (8,), w, b, 1e-5))
    wrong = (x - mean) / torch.sqrt(x.var(dim=-1, keepdim=True) + 1e-5) * w + b  # torch.var's default is D - 1
    assert not torch.allclose(wrong, F.layer_norm(x, (8,), w, b, 1e-5))
    xh = (x * 100).half()
    h = xh.float()
    h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
    ours = w.half() * h.to(xh.dtype)
    assert torch.isfinite(ours).all()
    assert torch.isinf(xh.pow(2)).any()  # squaring in fp16 overflows (values above 256), hence float32
    torch.testing.assert_close(ours.float(), F.rms_norm(x * 100, (8,), w, 1e-6), atol=2e-2, rtol=2e-3)
    d_model, d_ff = 4096, 11008
    w1, w3, w2 = (torch.nn.Linear(i, o, bias=False, device="meta") for i, o in ((d_model, d_ff), (d_model, d_ff), (d_ff, d_model)))
    assert sum(p.numel() for m in (w1, w3, w2) for p in m.parameters()) == 3 * d_model * d_ff
    assert d_ff % 256 == 0 and d_ff == 256 * math.ceil(8 * d_model / 3 / 256)


def test_sinusoidal_sketch_matches_the_formula():
    T, d_model, base = 7, 8, 10000.0
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    inv = base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    ang = pos * inv
    pe = torch.empty(T, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(ang), torch.cos(ang)
    for t in range(T):
        for i in range(d_model // 2):
            assert pe[t, 2 * i].item() == pytest.approx(math.sin(t / base ** (2 * i / d_model)), abs=1e-6)
            assert pe[t, 2 * i + 1].item() == pytest.approx(math.cos(t / base ** (2 * i / d_model)), abs=1e-6)


def test_attention_backward_sketch_with_a_mask():
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 8, dtype=torch.float64, requires_grad=True), torch.randn(2, 6, 8, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 6, 5, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(4, 6) > 0.4
    mask[:, 0] = True
    d_out = torch.randn(2, 4, 5, dtype=torch.float64)
    scale = 1 / math.sqrt(8)
    s = (q @ k.transpose(-2, -1) * scale).masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, -1)
    out = p @ v
    out.backward(d_out)
    p, out = p.detach(), out.detach()
    dv = p.transpose(-2, -1) @ d_out
    dp = d_out @ v.detach().transpose(-2, -1)
    D = (d_out * out).sum(-1, keepdim=True)
    ds = p * (dp - D)
    assert (ds[:, ~mask] == 0).all()
    torch.testing.assert_close(dv, v.grad)
    torch.testing.assert_close(ds @ k.detach() * scale, q.grad)
    torch.testing.assert_close(ds.transpose(-2, -1) @ q.detach() * scale, k.grad)
