"""Fact checks for questions/architectures.yaml (topic `architectures`, ids `arch-*`).

Every numeric answer is recomputed from first principles: parameter counts by building the real
layers (Llama, Qwen2, Qwen3-MoE, DeepSeek-V3 with MLA, gpt-oss) as torch modules on the meta device
and counting their parameters; KV-cache sizes from the cache tensors' element counts and byte widths;
BERT masking and T5 span corruption by simulating the procedures; the Llama 3 FFN size by running the
reference formula; MXFP4 storage from its block layout. The intermediate figures quoted in the prose
(per-layer counts, shares, ratios) are re-derived too. The reference answer of each question must hit
every key point in both languages, and every question must cite a primary source.
"""

from __future__ import annotations

import math
import re

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

ORIGIN = "architectures"


@pytest.fixture(scope="module")
def mine(bank):
    return {qid: x for qid, x in bank.questions.items() if bank.origins[qid][0].stem == ORIGIN}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


def says(x, *fragments):
    """Both language versions of the answer quote each fragment (numbers are language-neutral)."""
    for lang in ("en", "zh"):
        text = getattr(x.answer, lang)
        for f in fragments:
            assert f in text, (x.id, lang, f)


def n_params(module) -> int:
    return sum(p.numel() for p in module.parameters())


# --------------------------------------------------------------- structure ---


def test_file_size_levels_and_types(mine):
    assert len(mine) >= 38
    assert all(x.id.startswith("arch-") and x.topic == "architectures" for x in mine.values())
    levels = {lvl: sum(x.level == lvl for x in mine.values()) for lvl in ("L1", "L2", "L3")}
    assert min(levels.values()) >= 10, levels
    objective = sum(x.type in ("choice", "numeric", "shape") for x in mine.values())
    assert objective / len(mine) >= 0.5
    pitches = [x for x in mine.values() if "pitch" in x.tags]
    assert len(pitches) == 1 and pitches[0].type == "open" and pitches[0].time_limit == 60
    assert 100 <= len(pitches[0].answer.en.split()) <= 180


def test_key_points_and_primary_references(mine):
    primary = re.compile(r"arXiv:\d{4}\.\d{4,5}|config\.json|Model Card|documentation|repository", re.I)
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        assert any(primary.search(r) for r in x.references), (x.id, x.references)
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[\d.,%]+", kw.strip()) or x.type != "open", (x.id, kw)


def test_reference_answers_hit_every_key_point(mine):
    for x in mine.values():
        for lang in ("en", "zh"):
            text = getattr(x.answer, lang).lower()
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


def test_choices_are_well_formed(mine):
    for x in mine.values():
        if x.type != "choice":
            continue
        assert 3 <= len(x.choices) <= 5, x.id
        correct = x.correct if isinstance(x.correct, list) else [x.correct]
        assert all(0 <= c < len(x.choices) for c in correct), x.id
        multi = isinstance(x.correct, list)
        assert multi == ("select all" in x.prompt.en.lower()), x.id
        assert multi == ("多选" in x.prompt.zh), x.id
        assert "choose two" not in x.prompt.en.lower()


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        shown = {f"{v:g}", f"{v:,.0f}", f"{v:.2f}", f"{v:.1f}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


NUMERIC_CHECKED = {
    "arch-bert-mask-count",
    "arch-qwen25-7b-kv-bytes",
    "arch-t5-target-length",
    "arch-llama3-8b-params",
    "arch-qwen25-7b-params",
    "arch-qwen25-05b-embed-share",
    "arch-gpt-oss-mxfp4-memory",
    "arch-llama2-70b-params",
    "arch-qwen3-235b-kv-bytes",
    "arch-dsv3-active-params",
    "arch-dsv3-mla-kv-bytes",
    "arch-gpt-oss-kv-131k",
    "arch-gpt-oss-120b-params",
    "arch-qwen3-30b-active",
    "arch-llama3-ffn-size",
}


def test_every_numeric_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert not [x.id for x in mine.values() if x.type == "shape"]


# ------------------------------------------------------------ real modules ---


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d))


class SwiGLU(nn.Module):
    def __init__(self, d, ff, bias=False):
        super().__init__()
        self.gate = nn.Linear(d, ff, bias=bias)
        self.up = nn.Linear(d, ff, bias=bias)
        self.down = nn.Linear(ff, d, bias=bias)


class GQAttention(nn.Module):
    def __init__(self, d, n_heads, n_kv, head_dim, qkv_bias=False, o_bias=False, qk_norm=False, sinks=False):
        super().__init__()
        self.q = nn.Linear(d, n_heads * head_dim, bias=qkv_bias)
        self.k = nn.Linear(d, n_kv * head_dim, bias=qkv_bias)
        self.v = nn.Linear(d, n_kv * head_dim, bias=qkv_bias)
        self.o = nn.Linear(n_heads * head_dim, d, bias=o_bias)
        if qk_norm:
            self.q_norm, self.k_norm = RMSNorm(head_dim), RMSNorm(head_dim)
        if sinks:
            self.sinks = nn.Parameter(torch.empty(n_heads))


class DenseLayer(nn.Module):
    def __init__(self, d, ff, attn):
        super().__init__()
        self.attn, self.mlp = attn, SwiGLU(d, ff)
        self.ln1, self.ln2 = RMSNorm(d), RMSNorm(d)


def dense_model(vocab, d, layers, ff, heads, kv, head_dim=None, tied=False, qkv_bias=False):
    """(total parameters, embedding parameters) of a Llama/Qwen2-style decoder, from one real layer."""
    head_dim = head_dim or d // heads
    with torch.device("meta"):
        layer = DenseLayer(d, ff, GQAttention(d, heads, kv, head_dim, qkv_bias=qkv_bias))
        emb = nn.Embedding(vocab, d)
        head = None if tied else nn.Linear(d, vocab, bias=False)
        final = RMSNorm(d)
    embed = n_params(emb) + (0 if head is None else n_params(head))
    return layers * n_params(layer) + embed + n_params(final), embed, n_params(layer)


# ---------------------------------------------------------------------- L1 ---


def test_bert_mask_count(bank):
    x = q(bank, "arch-bert-mask-count")
    chosen = 512 * 0.15
    assert close(x, chosen * 0.8)
    assert math.isclose(chosen, 76.8) and math.isclose(chosen * 0.1, 7.68)
    assert round(512 - chosen) == 435
    # Simulate the 80/10/10 procedure as BERT (and HF's MLM collator) implement it.
    g = torch.Generator().manual_seed(0)
    n_seq, t = 4000, 512
    selected = torch.rand(n_seq, t, generator=g) < 0.15
    to_mask = selected & (torch.rand(n_seq, t, generator=g) < 0.8)
    to_random = selected & ~to_mask & (torch.rand(n_seq, t, generator=g) < 0.5)
    assert abs(to_mask.sum(1).float().mean().item() - 61.44) < 0.3
    assert abs(to_random.float().mean().item() - 0.015) < 0.001  # "only 1.5% of all tokens"
    mlm = q(bank, "arch-bert-mlm-802010")
    says(mlm, "1.5%")


def test_qwen25_7b_kv_bytes(bank):
    x = q(bank, "arch-qwen25-7b-kv-bytes")
    with torch.device("meta"):
        cache = torch.empty(2, 28, 4, 128, dtype=torch.bfloat16)  # K/V × layers × KV heads × head_dim, one token
        mha = torch.empty(2, 28, 28, 128, dtype=torch.bfloat16)
    per_token = cache.numel() * cache.element_size()
    assert per_token == 57_344
    assert close(x, per_token / 1024)
    assert mha.numel() * mha.element_size() == 7 * per_token == 392 * 1024
    assert per_token * 32_768 / 2**30 == 1.75
    says(x, "57,344", "392 KiB", "1.75 GiB")


def test_tied_embeddings_share(bank):
    x = q(bank, "arch-tied-embeddings")
    total, embed, _ = dense_model(151_936, 896, 24, 4864, 14, 2, tied=True, qkv_bias=True)
    assert round(100 * embed / total) == 28
    assert round((total + embed) / 1e6, -1) == 630 and round(2 * embed / 1e6) == 272
    q7, e7, _ = dense_model(152_064, 3584, 28, 18944, 28, 4, qkv_bias=True)
    assert round(e7 / 1e9, 2) == 1.09 and round(q7 / 1e9, 1) == 7.6
    says(x, "28%")


def test_llama2_70b_kv_mentioned_in_qwen3(bank):
    """The Qwen3 KV question compares with Llama-2-70B's 320 KiB per token."""
    assert 2 * 80 * 8 * 128 * 2 == 320 * 1024


# ---------------------------------------------------------------------- L2 ---


def t5_span_corruption_lengths(length, noise_density=0.15, mean_span=3.0):
    """Input and target lengths produced by T5's random_spans_noise_mask (round the counts, like its code)."""
    num_noise = int(round(length * noise_density))
    num_noise = min(max(num_noise, 1), length - 1)
    num_spans = max(int(round(num_noise / mean_span)), 1)
    inputs = length - num_noise + num_spans  # each span -> one sentinel
    targets = num_noise + num_spans  # each span preceded by its sentinel
    return inputs, targets


def test_t5_target_length(bank):
    x = q(bank, "arch-t5-target-length")
    noise = 512 * 0.15
    spans = noise / 3
    assert close(x, noise + spans)
    assert math.isclose(512 - noise + spans, 460.8)
    # T5's own integer procedure: 77 noise tokens in 26 spans -> 103 target tokens, within the tolerance.
    inputs, targets = t5_span_corruption_lengths(512)
    assert (inputs, targets) == (461, 103)
    assert abs(x.value - targets) <= x.tolerance


def test_t5_format_example(bank):
    """Re-run the corruption on the example sentence of the choice question."""
    x = q(bank, "arch-t5-span-corruption-format")
    words = "Thank you for inviting me to your party last week".split()
    spans = [(2, 4), (8, 9)]
    sentinels = ["<X>", "<Y>", "<Z>"]
    inp, tgt, i = [], [], 0
    for k, (a, b) in enumerate(spans):
        inp += words[i:a] + [sentinels[k]]
        tgt += [sentinels[k]] + words[a:b]
        i = b
    inp += words[i:]
    tgt += [sentinels[len(spans)]]
    assert " ".join(inp) == "Thank you <X> me to your party <Y> week"
    assert " ".join(tgt) == "<X> for inviting <Y> last <Z>"
    assert " ".join(tgt) in x.choices[x.correct].en


def test_llama3_8b_params(bank):
    x = q(bank, "arch-llama3-8b-params")
    total, embed, per_layer = dense_model(128_256, 4096, 32, 14_336, 32, 8)
    assert total == 8_030_261_248 and per_layer == 218_112_000 and embed == 1_050_673_152
    assert close(x, total / 1e9)
    with torch.device("meta"):
        attn = GQAttention(4096, 32, 8, 128)
    assert n_params(attn) == 41_943_040
    assert round(100 * embed / total) == 13
    says(x, "41,943,040", "176,160,768", "8,030,261,248")
    # The same builder reproduces Llama-2-7B's published 6.74B.
    l2, _, _ = dense_model(32_000, 4096, 32, 11_008, 32, 32)
    assert l2 == 6_738_415_616


def test_qwen25_7b_params(bank):
    x = q(bank, "arch-qwen25-7b-params")
    total, embed, per_layer = dense_model(152_064, 3584, 28, 18_944, 28, 4, qkv_bias=True)
    assert per_layer == 233_057_792 and embed == 1_089_994_752 and total == 7_615_616_512
    assert close(x, total / 1e9)
    assert total - embed == 6_525_621_760  # the card's 6.53B non-embedding
    assert 3584 + 512 + 512 == 4608
    assert round(100 * embed / total) == 14
    says(x, "233,057,792", "7,615,616,512", "6,525,621,760")


def test_qwen25_05b_embed_share(bank):
    x = q(bank, "arch-qwen25-05b-embed-share")
    total, embed, per_layer = dense_model(151_936, 896, 24, 4864, 14, 2, tied=True, qkv_bias=True)
    assert embed == 136_134_656 and per_layer == 14_912_384 and total == 494_032_768
    assert close(x, 100 * embed / total)
    assert round(100 * embed / total) == 28  # "a 28% larger model" if untied
    says(x, "136,134,656", "494,032,768")


def test_gpt_oss_mxfp4_memory(bank):
    x = q(bank, "arch-gpt-oss-mxfp4-memory")
    block_bits = 32 * 4 + 8  # 32 FP4 elements + one E8M0 scale
    bits = block_bits / 32
    assert bits == 4.25
    gb = 114.71e9 * bits / 8 / 1e9
    assert close(x, gb)
    rest = (0.96 + 1.16) * 2  # attention + embeddings in BF16, GB
    assert round(rest, 1) == 4.2 and round(gb + rest) == 65
    assert round(114.71 * 2) == 229


def test_llama2_70b_params(bank):
    x = q(bank, "arch-llama2-70b-params")
    total, embed, per_layer = dense_model(32_000, 8192, 80, 28_672, 64, 8)
    assert per_layer == 855_654_400 and total == 68_976_648_192 and embed == 524_288_000
    assert close(x, total / 1e9)
    assert round(100 * 3 * 8192 * 28_672 / per_layer) == 82
    says(x, "855,654,400", "704,643,072", "68,976,648,192")


def test_qwen3_235b_kv_bytes(bank):
    x = q(bank, "arch-qwen3-235b-kv-bytes")
    with torch.device("meta"):
        cache = torch.empty(2, 94, 4, 128, dtype=torch.bfloat16)
    per_token = cache.numel() * cache.element_size()
    assert per_token == 192_512
    assert close(x, per_token / 1024)
    assert round(per_token * 32_768 / 2**30, 1) == 5.9
    assert per_token < 320 * 1024
    says(x, "192,512", "5.9 GiB")


# ---------------------------------------------------------------------- L3 ---


class MLA(nn.Module):
    """DeepSeek-V3 attention: low-rank Q, compressed KV latent, decoupled RoPE key (with the two latent norms)."""

    def __init__(self, d=7168, heads=128, q_rank=1536, kv_rank=512, nope=128, rope=64, v_dim=128):
        super().__init__()
        self.q_a = nn.Linear(d, q_rank, bias=False)
        self.q_a_norm = RMSNorm(q_rank)
        self.q_b = nn.Linear(q_rank, heads * (nope + rope), bias=False)
        self.kv_a = nn.Linear(d, kv_rank + rope, bias=False)  # latent c_KV and the shared RoPE key
        self.kv_a_norm = RMSNorm(kv_rank)
        self.kv_b = nn.Linear(kv_rank, heads * (nope + v_dim), bias=False)
        self.o = nn.Linear(heads * v_dim, d, bias=False)


class Router(nn.Module):
    def __init__(self, d, n_experts, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_experts, d))
        if bias:
            self.bias = nn.Parameter(torch.empty(n_experts))


def test_deepseek_v3_active_and_total(bank):
    x = q(bank, "arch-dsv3-active-params")
    d, vocab = 7168, 129_280
    with torch.device("meta"):
        mla, expert = MLA(), SwiGLU(d, 2048)
        dense_mlp, router = SwiGLU(d, 18_432), Router(d, 256, bias=True)
        norms = RMSNorm(d)
    assert n_params(mla) == 187_107_328  # the figure given in the prompt
    e = n_params(expert)
    assert e == 44_040_192
    attn = 61 * n_params(mla)
    layer_norms = 61 * 2 * n_params(norms)
    dense = 3 * n_params(dense_mlp)
    routers = 58 * n_params(router)
    head = vocab * d
    active = 58 * 9 * e + routers + dense + attn + layer_norms + head + d
    assert 58 * 9 * e == 22_988_980_224 and routers == 106_445_312 and dense == 1_189_085_184
    assert attn == 11_413_547_008 and layer_norms == 874_496 and head == 926_679_040
    assert active == 36_625_618_432
    assert close(x, active / 1e9)
    total = 58 * 257 * e + routers + dense + attn + layer_norms + 2 * head + d
    assert round(total / 1e9, 1) == 671.0
    assert round(58 * 256 * e / 1e9, 1) == 653.9 and round(100 * 58 * 256 * e / total) == 97
    assert round(100 * attn / active) == 31  # "almost a third"
    says(x, "44,040,192", "22,988,980,224", "106,445,312", "36,625,618,432")


def test_deepseek_v3_mla_kv_bytes(bank):
    x = q(bank, "arch-dsv3-mla-kv-bytes")
    with torch.device("meta"):
        latent = torch.empty(61, 512 + 64, dtype=torch.bfloat16)
    per_token = latent.numel() * latent.element_size()
    assert per_token == 70_272
    assert close(x, per_token / 1024)
    mha_values = 2 * 128 * 128
    assert round(mha_values / 576) == 57
    assert round(mha_values * 61 * 2 / 2**20, 1) == 3.8
    assert round(2 * 8 * 128 / 576, 1) == 3.6
    says(x, "70,272", "32,768", "2,048")


def test_gpt_oss_kv_131k(bank):
    x = q(bank, "arch-gpt-oss-kv-131k")
    per_layer_token = 2 * 8 * 64 * 2
    assert per_layer_token == 2048
    full = 18 * 131_072 * per_layer_token
    banded = 18 * 128 * per_layer_token
    assert full == 4_831_838_208 and banded == 4_718_592 == int(4.5 * 2**20)
    assert close(x, (full + banded) / 2**30)
    assert 36 * 131_072 * per_layer_token / 2**30 == 9.0
    assert 18 * per_layer_token == 36 * 1024  # "36 KiB per token across its 18 full layers"
    # A real banded-window mask keeps exactly the last 128 keys per query.
    t, w = 300, 128
    i = torch.arange(t)
    allowed = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < w)
    assert int(allowed.sum(1).max()) == w


def test_gpt_oss_120b_params(bank):
    x = q(bank, "arch-gpt-oss-120b-params")
    d, layers, n_exp, vocab = 2880, 36, 128, 201_088

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_up = nn.Linear(d, 2 * d, bias=True)  # fused, 2880 x 5760
            self.down = nn.Linear(d, d, bias=True)

    with torch.device("meta"):
        expert, router = Expert(), Router(d, n_exp, bias=True)
        attn = GQAttention(d, 64, 8, 64, qkv_bias=True, o_bias=True, sinks=True)
        norm = RMSNorm(d)
    e = n_params(expert)
    assert e == 24_891_840
    moe = layers * (n_exp * e + n_params(router))
    assert round(moe / 1e9, 2) == 114.71
    a = n_params(attn)
    assert a == 26_550_144 and layers * a == 955_805_184
    emb = 2 * vocab * d
    assert emb == 1_158_266_880
    norms = layers * 2 * n_params(norm) + d
    assert norms == 210_240
    total = moe + layers * a + emb + norms
    assert total == 116_829_156_672
    assert close(x, total / 1e9)
    active = layers * (4 * e + n_params(router) + a + 2 * d) + vocab * d + d
    assert round(active / 1e9, 2) == 5.13
    says(x, "24,891,840", "955,805,184", "1,158,266,880", "116,829,156,672")


def test_qwen3_30b_active(bank):
    x = q(bank, "arch-qwen3-30b-active")
    d, layers, vocab = 2048, 48, 151_936
    with torch.device("meta"):
        attn = GQAttention(d, 32, 4, 128, qk_norm=True)
        expert, router = SwiGLU(d, 768), Router(d, 128, bias=False)
        norms = RMSNorm(d)
    a = n_params(attn)
    assert a == 18_874_368 + 256
    per_layer_active = a + 2 * n_params(norms) + 8 * n_params(expert) + n_params(router)
    assert 8 * n_params(expert) == 37_748_736 and n_params(router) == 262_144
    assert per_layer_active == 56_889_600 and layers * per_layer_active == 2_730_700_800
    emb = 2 * vocab * d
    assert emb == 622_329_856
    active = layers * per_layer_active + emb + d
    assert active == 3_353_032_704
    assert close(x, active / 1e9)
    total = layers * (a + 2 * d + 128 * n_params(expert) + n_params(router)) + emb + d
    assert round(total / 1e9, 2) == 30.53
    assert round(vocab * d / 1e9, 2) == 0.31 and round(100 * vocab * d / active) == 9
    says(x, "18,874,368", "37,748,736", "56,889,600", "3,353,032,704")


def llama_ffn_hidden(dim, multiple_of, ffn_dim_multiplier=None):
    """FeedForward sizing from Meta's llama / llama-models reference code."""
    hidden = 4 * dim
    hidden = int(2 * hidden / 3)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def test_llama3_ffn_size(bank):
    x = q(bank, "arch-llama3-ffn-size")
    assert int(2 * 4 * 4096 / 3) == 10_922 and int(1.3 * 10_922) == 14_198
    h = llama_ffn_hidden(4096, 1024, 1.3)
    assert close(x, h) and h == 14_336
    assert int(2 * 4 * 8192 / 3) == 21_845 and int(1.3 * 21_845) == 28_398
    assert llama_ffn_hidden(8192, 1024, 1.3) == 28_672  # Llama 3 70B
    assert llama_ffn_hidden(8192, 4096, 1.3) == 28_672  # Llama 2 70B (multiple_of 4096)
    assert llama_ffn_hidden(4096, 256) == 11_008  # LLaMA-1 7B
    assert round(h / 4096, 2) == 3.5 and round(8 / 3, 2) == 2.67
    says(x, "10,922", "14,198", "28,672", "11,008")


def test_attention_sink_lets_a_head_attend_to_nothing():
    """A learned logit in the softmax denominator (zero value) shrinks the weights on real keys."""
    torch.manual_seed(0)
    scores = torch.randn(4, 10)
    v = torch.randn(10, 8)
    sink = torch.tensor(5.0)
    with_sink = torch.softmax(torch.cat([scores, sink.expand(4, 1)], dim=-1), dim=-1)
    p_real = with_sink[:, :-1]
    assert torch.all(p_real.sum(-1) < 1.0)
    ref = torch.exp(scores) / (torch.exp(scores).sum(-1, keepdim=True) + torch.exp(sink))
    assert torch.allclose(p_real, ref, atol=1e-6)
    out = p_real @ v  # the sink's value is zero
    plain = torch.softmax(scores, -1) @ v
    assert out.norm() < plain.norm()
