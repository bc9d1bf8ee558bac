"""Recompute every numeric and shape answer of the multi-head, position and
transformer-block banks from first principles, mostly with real torch code.

Users repeat these answers in interviews, so a number in the YAML that drifts
from what PyTorch (or the formula) actually gives is a bug.
"""

from __future__ import annotations

import math
import re

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

MY_TOPICS = ("multi-head", "position", "transformer-block")
MY_FILES = {f"{t}.yaml" for t in MY_TOPICS}
PREFIX = {"multi-head": "mha-", "position": "pos-", "transformer-block": "block-"}

# Concrete values for the symbolic dims used in shape answers; distinct from
# every literal size so a swapped axis cannot pass by accident.
B, T = 3, 16
SYMBOLS = {"B": B, "T": T}


@pytest.fixture(scope="module")
def q(bank):
    return bank.questions.__getitem__


def expected_shape(shape: str) -> tuple[int, ...]:
    dims = [d.strip() for d in re.sub(r"[\[\]()]", "", shape).split(",") if d.strip()]
    return tuple(SYMBOLS[d] if d in SYMBOLS else int(d) for d in dims)


def assert_numeric(question, computed: float):
    assert question.type == "numeric"
    assert abs(question.value - computed) <= max(question.tolerance, 1e-9 * abs(computed)), (
        f"{question.id}: YAML says {question.value} ± {question.tolerance}, recomputed {computed}"
    )


def assert_shape(question, tensor_or_shape):
    assert question.type == "shape"
    got = tuple(tensor_or_shape.shape if hasattr(tensor_or_shape, "shape") else tensor_or_shape)
    assert expected_shape(question.shape) == got, f"{question.id}: YAML {question.shape}, torch {got}"


def split_heads(x: torch.Tensor, h: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.view(b, t, h, d // h).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    b, h, t, dk = x.shape
    return x.transpose(1, 2).contiguous().view(b, t, h * dk)


def matmul_flops(fn) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


# --------------------------------------------------------------------------- structure


# --------------------------------------------------------------------------- multi-head


def test_mha_head_dim(q):
    x = torch.randn(B, T, 512)
    heads = x.view(B, T, 8, -1)
    assert_numeric(q("mha-head-dim"), heads.shape[-1])
    assert_numeric(q("mha-head-dim"), 512 / 8)


def test_mha_wq_weight_shape(q):
    assert_shape(q("mha-wq-weight-shape"), nn.Linear(512, 512).weight)
    per_head = [torch.randn(512, 64) for _ in range(8)]
    assert_shape(q("mha-wq-weight-shape"), torch.cat(per_head, dim=1))


def test_mha_split_merge_shapes(q):
    w_q, w_k, w_v = (nn.Linear(512, 512) for _ in range(3))
    x = torch.randn(B, T, 512)
    qh, kh, vh = (split_heads(w(x), 8) for w in (w_q, w_k, w_v))
    assert_shape(q("mha-per-head-q-shape"), qh)
    scores = qh @ kh.transpose(-2, -1) / math.sqrt(64)
    out = scores.softmax(-1) @ vh
    assert out.shape == (B, 8, T, 64)
    # the answers say .view on the transposed tensor fails without .contiguous()
    with pytest.raises(RuntimeError):
        out.transpose(1, 2).view(B, T, 512)
    assert torch.equal(out.transpose(1, 2).reshape(B, T, 512), merge_heads(out))


def test_mha_returned_weights_are_head_averaged(q):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(512, 8, batch_first=True)
    x = torch.randn(B, T, 512)
    out, w = mha(x, x, x)
    assert_shape(q("mha-scores-shape"), w)
    _, per_head = mha(x, x, x, average_attn_weights=False)
    assert per_head.shape == (B, 8, T, T)
    torch.testing.assert_close(per_head.mean(1), w)
    torch.testing.assert_close(w.sum(-1), torch.ones(B, T))
    _, none = mha(x, x, x, need_weights=False)
    assert none is None


def test_mha_merged_shape_with_decoupled_head_size(q):
    h, d_v, d_model = 8, 96, 512
    out = torch.randn(B, h, T, d_v)
    merged = merge_heads(out)
    assert_shape(q("mha-merged-shape"), merged)
    w_o = nn.Linear(h * d_v, d_model)
    assert w_o.weight.shape == (512, 768) and w_o(merged).shape == (B, T, d_model)


def test_mha_split_matches_nn_multihead_attention():
    """Our split/merge recipe reproduces PyTorch's own MultiheadAttention."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(512, 8, batch_first=True)
    x = torch.randn(B, T, 512)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    qh = split_heads(x @ w_q.T + b_q, 8)
    kh = split_heads(x @ w_k.T + b_k, 8)
    vh = split_heads(x @ w_v.T + b_v, 8)
    out = (qh @ kh.transpose(-2, -1) / 8.0).softmax(-1) @ vh
    ours = mha.out_proj(merge_heads(out))
    ref, _ = mha(x, x, x, need_weights=False)
    torch.testing.assert_close(ours, ref, rtol=1e-4, atol=1e-5)


def test_mha_reshape_without_transpose_bug(q):
    question = q("mha-reshape-without-transpose")
    assert question.correct == 2
    x = torch.arange(B * T * 512, dtype=torch.float32).view(B, T, 512)
    wrong = x.view(B, 8, T, 64)  # no error is raised
    right = split_heads(x, 8)
    assert not torch.equal(wrong, right)
    # "row 1 of head 0 is features 64-127 of token 0"
    assert torch.equal(wrong[0, 0, 1], x[0, 0, 64:128])
    # a causal mask lets position 0 of head 1 see features of a *later* token
    assert torch.equal(wrong[0, 1, 0], x[0, T // 8, 0:64])
    assert T // 8 > 0
    # the other classic bug: no transpose at all attends across heads, not tokens
    no_t = x.view(B, T, 8, 64)
    assert (no_t @ no_t.transpose(-2, -1)).shape == (B, T, 8, 8)


def test_mha_cost_vs_single_head(q):
    assert q("mha-cost-vs-single-head").correct == 1
    d, h, t = 512, 8, 128
    dk = d // h
    assert h * d * dk == d * d  # projections: same parameters
    multi = matmul_flops(lambda: torch.randn(1, h, t, dk) @ torch.randn(1, h, dk, t))
    single = matmul_flops(lambda: torch.randn(1, 1, t, d) @ torch.randn(1, 1, d, t))
    assert multi == single == 2 * t * t * d
    # ... but the score tensor is h times larger
    assert h * t * t == 8 * (t * t)


def test_mha_score_macs(q):
    """GQA (64 query heads, 8 KV heads): every query head still scores every key."""
    question = q("mha-score-macs")
    t, d, h, h_kv = 4096, 128, 64, 8
    with torch.device("meta"):
        qh = torch.empty(1, h, t, d, dtype=torch.float16)
        k = torch.empty(1, h_kv, t, d, dtype=torch.float16).repeat_interleave(h // h_kv, dim=1)
        flops = matmul_flops(lambda: qh @ k.transpose(-2, -1))
    assert flops == 2 * h * t * t * d == 274_877_906_944
    assert_numeric(question, flops / 1e9)
    assert round(2 * h_kv * t * t * d / 1e9) == 34  # the pitfall's figure


def test_mha_param_count(q):
    question = q("mha-param-count")
    for heads in (8, 1, 16):
        mha = nn.MultiheadAttention(embed_dim=512, num_heads=heads)
        assert_numeric(question, sum(p.numel() for p in mha.parameters()))
    assert_numeric(question, 4 * 512 * 512 + 4 * 512)


def test_mha_gqa_k_shape(q):
    h, n_kv, dk = 8, 2, 64
    w_k = nn.Linear(512, n_kv * dk)
    assert w_k.weight.shape == (128, 512)
    k = split_heads(w_k(torch.randn(B, T, 512)), n_kv)
    assert_shape(q("mha-gqa-k-shape"), k)
    expanded = k.repeat_interleave(h // n_kv, dim=1)
    assert expanded.shape == (B, h, T, dk)
    for i in range(h):  # query head i uses KV head i // 4
        assert torch.equal(expanded[:, i], k[:, i // (h // n_kv)])


def test_mha_kv_cache_gqa_size(q):
    layers, n_heads, n_kv, hd, tokens = 32, 32, 8, 128, 4096
    k_cache = torch.empty(layers, 1, n_kv, tokens, hd, dtype=torch.float16, device="meta")
    gqa_bytes = 2 * k_cache.numel() * k_cache.element_size()
    assert_numeric(q("mha-kv-cache-gqa-size"), gqa_bytes / 2**30)
    assert gqa_bytes == 536_870_912
    mha_bytes = 2 * layers * n_heads * tokens * hd * 2
    assert mha_bytes / 2**30 == 2.0 and mha_bytes // gqa_bytes == n_heads // n_kv == 4


def test_mha_mla_cache_ratio(q):
    n_h, d_h, d_c, d_r = 128, 128, 512, 64
    mha = 2 * n_h * d_h
    mla = d_c + d_r
    assert (mha, mla) == (32768, 576)
    assert_numeric(q("mha-mla-cache-ratio"), mha / mla)
    assert mla == 2 * 2.25 * d_h  # "like GQA with 2.25 groups"


def test_mha_low_rank_scores():
    """A head's logit matrix has rank <= d_k (the low-rank bottleneck)."""
    torch.manual_seed(0)
    t, dk = 256, 16
    qm, km = torch.randn(t, dk, dtype=torch.float64), torch.randn(t, dk, dtype=torch.float64)
    assert torch.linalg.matrix_rank(qm @ km.T) == dk


# --------------------------------------------------------------------------- position


def sinusoidal(n_pos: int, d: int) -> torch.Tensor:
    pos = torch.arange(n_pos, dtype=torch.float64)[:, None]
    i = torch.arange(d // 2, dtype=torch.float64)
    angle = pos / 10000 ** (2 * i / d)
    pe = torch.zeros(n_pos, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def test_pos_sinusoid_relative_is_linear():
    d, k = 64, 7
    pe = sinusoidal(200, d)
    omega = 10000 ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)
    m_k = torch.zeros(d, d, dtype=torch.float64)
    for i, w in enumerate(omega):
        c, s = torch.cos(w * k), torch.sin(w * k)
        m_k[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, s], [-s, c]])
    for p in (0, 13, 150):
        torch.testing.assert_close(m_k @ pe[p], pe[p + k])
    # PE(p)·PE(p+k) = sum_i cos(w_i k): depends only on k, and symmetric in ±k
    dots = [pe[p] @ pe[p + k] for p in (0, 20, 100)]
    torch.testing.assert_close(torch.stack(dots), torch.cos(omega * k).sum().repeat(3))
    torch.testing.assert_close(pe[50] @ pe[50 + k], pe[50] @ pe[50 - k])


def rope_theta(d: int, base: float = 10000.0) -> torch.Tensor:
    return base ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)


def rope_interleaved(x: torch.Tensor, pos: float, theta: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (2i, 2i+1) by pos * theta_i (RoFormer layout)."""
    a = pos * theta
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * torch.cos(a) - x1 * torch.sin(a)
    out[..., 1::2] = x0 * torch.sin(a) + x1 * torch.cos(a)
    return out


def rope_rotate_half(x: torch.Tensor, pos: float, theta: torch.Tensor) -> torch.Tensor:
    """HF/LLaMA layout: pair dim i with dim i + d/2."""
    a = torch.cat([pos * theta, pos * theta])
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * torch.cos(a) + rotated * torch.sin(a)


def test_pos_rope_facts(q):
    assert sorted(q("pos-rope-applied-to").correct) == [0, 2, 4]
    torch.manual_seed(0)
    d = 128
    theta = rope_theta(d)
    qv, kv = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    # q_m . k_n depends only on m - n
    s1 = rope_interleaved(qv, 5, theta) @ rope_interleaved(kv, 2, theta)
    s2 = rope_interleaved(qv, 1003, theta) @ rope_interleaved(kv, 1000, theta)
    torch.testing.assert_close(s1, s2)
    assert not torch.isclose(s1, rope_interleaved(qv, 6, theta) @ rope_interleaved(kv, 2, theta))
    # norm preserving
    torch.testing.assert_close(rope_interleaved(qv, 777, theta).norm(), qv.norm())
    # rotate_half is the same rotation up to a fixed permutation of dimensions
    perm = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
    torch.testing.assert_close(rope_rotate_half(qv[perm], 37, theta), rope_interleaved(qv, 37, theta)[perm])


def test_pos_rope_complex_form():
    """The complex-number proof: f(x, m) = x_hat * e^{i m theta}."""
    torch.manual_seed(1)
    d = 64
    theta = rope_theta(d)
    qv, kv = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    qc, kc = torch.view_as_complex(qv.view(-1, 2)), torch.view_as_complex(kv.view(-1, 2))
    m, n = 9, 4
    direct = rope_interleaved(qv, m, theta) @ rope_interleaved(kv, n, theta)
    via_complex = (qc * kc.conj() * torch.exp(1j * (m - n) * theta)).sum().real
    torch.testing.assert_close(direct, via_complex)


def test_pos_rope_theta(q):
    question = q("pos-rope-theta")
    theta = rope_theta(128)
    assert_numeric(question, theta[32].item())
    assert 2 * math.pi / theta[32].item() == pytest.approx(628.3, abs=0.1)
    assert theta[63].item() == pytest.approx(1.15e-4, rel=0.01)
    assert 2 * math.pi / theta[63].item() == pytest.approx(54_400, rel=0.005)


def test_pos_rope_angle_table(q):
    table = torch.outer(torch.arange(4096, dtype=torch.float32), rope_theta(128).float())
    assert_shape(q("pos-rope-angle-table"), table)
    assert torch.cat([table, table], dim=-1).shape == (4096, 128)


def alibi_slopes(n: int) -> list[float]:
    """Press et al.'s reference get_slopes for a power-of-two head count."""
    start = 2 ** (-(2 ** -(math.log2(n) - 3)))
    return [start * start**i for i in range(n)]


def test_pos_alibi_slopes(q):
    slopes = alibi_slopes(8)
    assert slopes[0] == 0.5
    assert_numeric(q("pos-alibi-slopes"), slopes[-1])
    assert slopes[-1] * 1000 == pytest.approx(3.9, abs=0.01)
    assert alibi_slopes(16)[0] == pytest.approx(2**-0.5)
    assert alibi_slopes(16)[-1] == pytest.approx(2**-8)
    assert 16384 * slopes[-1] == 64  # "a token 16k back gets about -64"


def test_pos_pi_scaled_position(q):
    assert_numeric(q("pos-pi-scaled-position"), 6000 * 2048 / 8192)


def test_pos_ntk_base(q):
    d, s, base = 128, 4, 10000.0
    new_base = base * s ** (d / (d - 2))
    assert_numeric(q("pos-ntk-base"), new_base)
    old, new = rope_theta(d, base), rope_theta(d, new_base)
    assert new[0] == old[0] == 1.0  # highest frequency unchanged
    torch.testing.assert_close(new[-1], old[-1] / s)  # lowest frequency interpolated by exactly s
    assert bool(((old / new)[1:-1] > 1).all() and ((old / new)[1:-1] < s).all())


# --------------------------------------------------------------------------- transformer block


def test_block_layernorm_axis(q):
    assert q("block-layernorm-axis").correct == 1
    x = torch.randn(B, T, 512) * 5 + 3
    y = nn.LayerNorm(512)(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(B, T), atol=1e-5, rtol=0)
    assert not torch.allclose(y.mean(0), torch.zeros(T, 512), atol=1e-3)


def test_block_rmsnorm(q):
    assert sorted(q("block-rmsnorm").correct) == [0, 1, 3]
    if not hasattr(nn, "RMSNorm"):
        pytest.skip("torch.nn.RMSNorm needs torch >= 2.4")
    norm = nn.RMSNorm(512, eps=1e-6)
    assert [name for name, _ in norm.named_parameters()] == ["weight"]  # gain only, no bias
    x = torch.randn(B, T, 512) + 2.0
    ref = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(norm(x), ref)
    assert norm(x).mean(-1).abs().min() > 0.1  # not mean-centred


def test_block_ffn_width_and_hidden_shape(q):
    assert_numeric(q("block-ffn-width"), 4 * 512)
    ffn = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))
    x = torch.randn(B, T, 512)
    hidden = ffn[1](ffn[0](x))
    assert_shape(q("block-ffn-hidden-shape"), hidden)
    assert ffn(x).shape == x.shape


def test_block_attention_mixes_tokens_ffn_does_not(q):
    assert q("block-attn-vs-ffn").correct == 0
    torch.manual_seed(0)
    ffn = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))
    attn = nn.MultiheadAttention(64, 4, batch_first=True)
    x = torch.randn(1, T, 64)
    x2 = x.clone()
    x2[0, 0] += 1.0  # perturb token 0 only
    torch.testing.assert_close(ffn(x2)[0, 1:], ffn(x)[0, 1:])
    assert not torch.allclose(attn(x2, x2, x2)[0][0, 1:], attn(x, x, x)[0][0, 1:])


def test_block_param_count_512(q):
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048)
    weights = sum(p.numel() for p in layer.parameters() if p.dim() == 2)
    assert_numeric(q("block-param-count-512"), weights)
    assert weights == 12 * 512**2
    assert sum(p.numel() for p in layer.parameters()) == 3_152_384  # "with biases and LayerNorms"


class SwiGLU(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.w = nn.Linear(d, hidden, bias=False, device="meta")
        self.v = nn.Linear(d, hidden, bias=False, device="meta")
        self.w2 = nn.Linear(hidden, d, bias=False, device="meta")


def llama_ffn_hidden(dim: int, multiple_of: int = 256) -> int:
    hidden = int(2 * (4 * dim) / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def numel(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_block_swiglu_hidden_512(q):
    question = q("block-swiglu-hidden-512")
    relu_ffn = 2 * 512 * 2048
    assert_numeric(question, relu_ffn / (3 * 512))
    assert_numeric(question, 8 * 512 / 3)
    assert abs(numel(SwiGLU(512, 1365)) - relu_ffn) <= 3 * 512


def test_block_swiglu_llama_hidden(q):
    assert_numeric(q("block-swiglu-llama-hidden"), llama_ffn_hidden(4096))
    assert llama_ffn_hidden(4096) == 43 * 256
    assert llama_ffn_hidden(5120) == 13824
    assert 11008 / (8 * 4096 / 3) - 1 == pytest.approx(0.008, abs=0.001)


def test_block_llama_7b_params(q):
    d, layers, vocab, ffn_hidden = 4096, 32, 32000, 11008
    attn = nn.ModuleList(nn.Linear(d, d, bias=False, device="meta") for _ in range(4))
    per_layer = numel(attn) + numel(SwiGLU(d, ffn_hidden)) + 2 * d
    assert per_layer == 202_383_360
    embed = nn.Embedding(vocab, d, device="meta")
    head = nn.Linear(d, vocab, bias=False, device="meta")
    total = layers * per_layer + numel(embed) + numel(head) + d
    assert total == 6_738_415_616
    assert_numeric(q("block-llama-7b-params"), total / 1e9)
    assert 12 * d**2 * layers / 1e9 == pytest.approx(6.44, abs=0.01)


def test_block_norm_low_precision_claims():
    half = torch.finfo(torch.float16)
    assert half.max == 65504
    assert torch.isinf(torch.tensor(256.0, dtype=torch.float16) ** 2)
    assert 1e-6 < half.tiny == pytest.approx(6.1e-5, rel=0.01)
    assert torch.finfo(torch.bfloat16).eps == 2**-7  # 8 bits of precision incl. the implicit bit


def test_pos_partial_rope(q):
    """GPT-NeoX-20B: 6144 / 64 = 96 dims per head, RoPE on the first 25% = 24 dims = 12 pairs."""
    head_dim = 6144 // 64
    rotary = int(head_dim * 0.25)
    assert (head_dim, rotary) == (96, 24)
    assert_numeric(q("pos-partial-rope"), rotary // 2)
    inv = 10000.0 ** (-torch.arange(0, rotary, 2, dtype=torch.float64) / rotary)  # exponent over the rotary dims
    assert len(inv) == 12 and inv[0] == 1.0
    assert (head_dim - rotary) / head_dim == 0.75
    assert 64 / 256 == 0.25  # GPT-J rotates 64 of its 256 head dims
