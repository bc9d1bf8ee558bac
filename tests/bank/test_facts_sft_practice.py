"""Fact checks for questions/sft-practice.yaml (SFT data and training practice, ids ``sft-``).

Every numeric answer is recomputed from first principles: the LSH banding probability (and
MinHash's collision probability by simulation), the IFD ratio, supervised-token counts through a
real ``F.cross_entropy`` with ``ignore_index``, LoRA parameter counts from real modules on the meta
device, rsLoRA scaling, QLoRA memory, optimizer state bytes read from real torch optimizers
(AdamW, SGD, Adafactor), AdamW's decoupled decay by running ``torch.optim.AdamW``, replay token
budgets. Shape answers are produced by torch code (``cu_seqlens`` for packed sequences, the resized
LM head). Runnable claims are run: packing with a block-diagonal causal mask equals attending to
each conversation alone, Lion moves every coordinate by exactly the learning rate, Muon's quintic
Newton-Schulz iteration maps singular values into roughly 0.7-1.2 and approximates UVᵀ, and
Moonlight's RMS-matching scale. The structure tests check levels, topics, the objective share,
references, multi-select wording, and that each reference answer hits every key point in its own
language.
"""

from __future__ import annotations

import math
import re
import unicodedata

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

STEM = "sft-practice"
TOPICS = {"fine-tuning", "data", "training"}


@pytest.fixture(scope="module")
def mine(bank):
    return {qid: x for qid, x in bank.questions.items() if bank.origins[qid][0].stem == STEM}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


# --------------------------------------------------------------- structure ---


def test_size_levels_topics_and_objective_share(mine):
    qs = list(mine.values())
    assert len(qs) >= 34
    assert all(x.id.startswith("sft-") for x in qs)
    assert {x.topic for x in qs} == TOPICS
    for topic in TOPICS:
        assert {x.level for x in qs if x.topic == topic} == {"L1", "L2", "L3"}, topic
    assert sum(x.objective for x in qs) / len(qs) >= 0.45


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        # at least one primary source: a paper with a year / arXiv id, or official documentation
        assert any(re.search(r"(19|20)\d\d|arXiv|docs", r) for r in x.references), x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[\d.,%]+", kw.strip()), (x.id, kw)


def test_reference_answers_hit_every_key_point_in_their_own_language(mine):
    for x in mine.values():
        for lang in ("en", "zh"):
            text = fold(getattr(x.answer, lang))
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(fold(w) in text for w in words), (x.id, lang, i, words)


def test_choices_are_well_formed(mine):
    for x in mine.values():
        if x.type != "choice":
            continue
        assert 3 <= len(x.choices) <= 5, x.id
        correct = x.correct if isinstance(x.correct, list) else [x.correct]
        assert all(0 <= c < len(x.choices) for c in correct), x.id
        multi = isinstance(x.correct, list)
        assert ("select all that apply" in x.prompt.en.lower()) == multi, x.id
        assert ("多选" in x.prompt.zh) == multi, x.id
        assert "choose two" not in x.prompt.en.lower(), x.id


NUMERIC_CHECKED = {
    "sft-minhash-lsh-prompts",
    "sft-ifd-numeric",
    "sft-supervised-token-count",
    "sft-lora-gqa-param-count",
    "sft-rslora-numeric",
    "sft-qlora-memory",
    "sft-opt-state-7b",
    "sft-adafactor-factored",
    "sft-adamw-decay-numeric",
    "sft-cpt-replay-tokens",
}
SHAPE_CHECKED = {"sft-packing-cu-seqlens", "sft-vocab-resize-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        shown = {f"{v:g}", f"{v:,.0f}", f"{v:.3f}", f"{v:.2f}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


# -------------------------------------------------------------------- data ---


def lsh_candidate_prob(s: float, b: int, r: int) -> float:
    return 1 - (1 - s**r) ** b


def test_minhash_lsh_prompts(bank):
    x = q(bank, "sft-minhash-lsh-prompts")
    assert close(x, lsh_candidate_prob(0.5, 20, 5))
    assert 0.5**5 == 0.03125
    assert abs((1 - 0.03125) ** 20 - 0.530) < 5e-4
    # the textbook figures quoted in the answer
    assert abs(lsh_candidate_prob(0.8, 20, 5) - 0.99965) < 1e-5
    assert abs(lsh_candidate_prob(0.3, 20, 5) - 0.047) < 1e-3
    assert abs((1 / 20) ** (1 / 5) - 0.55) < 0.005


def test_minhash_collision_probability_is_jaccard():
    """P[min h(A) = min h(B)] = |A ∩ B| / |A ∪ B|, estimated with real random permutations."""
    g = torch.Generator().manual_seed(0)
    universe = 200
    a = set(range(0, 60))
    b = set(range(30, 90))  # |A ∩ B| = 30, |A ∪ B| = 90
    jac = len(a & b) / len(a | b)
    ia, ib = torch.tensor(sorted(a)), torch.tensor(sorted(b))
    trials, hits = 20000, 0
    for _ in range(trials):
        perm = torch.randperm(universe, generator=g)
        hits += int(perm[ia].min() == perm[ib].min())
    assert abs(hits / trials - jac) < 0.015


def test_ifd(bank):
    x = q(bank, "sft-ifd-numeric")
    n = 120
    s_cond, s_alone = 96 / n, 150 / n
    assert (s_cond, s_alone) == (0.8, 1.25)
    assert close(x, s_cond / s_alone)
    assert abs(96 / 150 - s_cond / s_alone) < 1e-12  # the token counts cancel


# ------------------------------------------------------------- fine-tuning ---


def test_ignore_index_default():
    import inspect

    assert inspect.signature(F.cross_entropy).parameters["ignore_index"].default == -100
    logits = torch.randn(4, 10)
    target = torch.tensor([1, -100, 3, -100])
    full = F.cross_entropy(logits, target)
    kept = F.cross_entropy(logits[[0, 2]], target[[0, 2]])
    assert torch.allclose(full, kept)  # ignored targets leave the sum and the mean's denominator


def test_supervised_token_count(bank):
    x = q(bank, "sft-supervised-token-count")
    # (length, supervised?) in order
    segments = [(25, False), (40, False), (4, False), (150, True), (1, True), (30, False), (4, False), (80, True), (1, True)]
    labels = torch.cat([torch.full((n,), 7 if sup else -100) for n, sup in segments])
    assert labels.numel() == 335
    supervised = int((labels != -100).sum())
    assert close(x, supervised)
    # the token-mean loss divides by exactly this count
    logits = torch.randn(labels.numel(), 16, dtype=torch.float64)
    mean = F.cross_entropy(logits, labels)
    total = F.cross_entropy(logits, labels, reduction="sum")
    assert torch.allclose(mean * supervised, total)
    assert round(232 / 335, 2) == 0.69


def lora_params(d_in: int, d_out: int, r: int) -> int:
    with torch.device("meta"):
        a = torch.nn.Linear(d_in, r, bias=False)
        b = torch.nn.Linear(r, d_out, bias=False)
    return a.weight.numel() + b.weight.numel()


def test_lora_gqa_param_count(bank):
    x = q(bank, "sft-lora-gqa-param-count")
    d, kv, ff, r, layers = 4096, 8 * 128, 14336, 16, 32
    shapes = [(d, d), (d, kv), (d, kv), (d, d), (d, ff), (d, ff), (ff, d)]
    per_layer = sum(lora_params(i, o, r) for i, o in shapes)
    assert per_layer == 1_310_720
    assert lora_params(d, kv, r) * 2 == 163_840
    assert close(x, layers * per_layer / 1e6)
    assert layers * per_layer == 41_943_040
    no_gqa = layers * sum(lora_params(i, o, r) for i, o in [(d, d)] * 4 + shapes[4:])
    assert abs(no_gqa / 1e6 - 45.09) < 0.01
    mlp = layers * sum(lora_params(i, o, r) for i, o in shapes[4:])
    assert abs(mlp / (layers * per_layer) - 2 / 3) < 0.02


def test_rslora(bank):
    x = q(bank, "sft-rslora-numeric")
    alpha, r = 16, 128
    assert alpha / r == 0.125
    assert close(x, alpha / math.sqrt(r))
    assert abs((alpha / math.sqrt(r)) / (alpha / r) - 11.3) < 0.05
    assert abs(alpha / math.sqrt(8) - 5.66) < 0.005 and alpha / 8 == 2


def test_qlora_memory(bank):
    x = q(bank, "sft-qlora-memory")
    const_bits = 8 / 64 + 32 / (64 * 256)
    assert abs(const_bits - 0.127) < 5e-4
    base = 70e9 * (4 + const_bits) / 8 / 1e9
    assert abs(base - 36.11) < 0.01
    adapters = 200e6 * (2 + 2 + 8) / 1e9
    assert adapters == 2.4
    assert close(x, base + adapters)
    assert 70e9 * 16 / 1e9 == 1120


def test_packing_cu_seqlens_shape_and_block_diagonal_equivalence(bank):
    x = q(bank, "sft-packing-cu-seqlens")
    g = torch.Generator().manual_seed(0)
    docs_per_row = [3, 2, 5, 1]
    lengths = torch.randint(3, 9, (sum(docs_per_row),), generator=g, dtype=torch.int32)
    cu = F.pad(lengths.cumsum(0, dtype=torch.int32), (1, 0))
    assert list(cu.shape) == [int(d) for d in re.findall(r"\d+", x.shape)]
    assert cu[0] == 0 and cu[-1] == lengths.sum()

    # a block-diagonal causal mask over the flattened stream == each conversation attended alone
    total, h, dh = int(lengths.sum()), 2, 8
    qkv = torch.randn(3, 1, h, total, dh, generator=g, dtype=torch.float64)
    doc = torch.repeat_interleave(torch.arange(len(lengths)), lengths.long())
    pos = torch.arange(total)
    mask = (doc[:, None] == doc[None, :]) & (pos[:, None] >= pos[None, :])
    packed = F.scaled_dot_product_attention(*qkv, attn_mask=mask)
    for i in range(len(lengths)):
        s, e = int(cu[i]), int(cu[i + 1])
        alone = F.scaled_dot_product_attention(*(t[..., s:e, :] for t in qkv), is_causal=True)
        assert torch.allclose(packed[..., s:e, :], alone)


# ---------------------------------------------------------------- training ---


def state_bytes_per_param(opt_cls, **kw) -> float:
    p = torch.zeros(64, 32, requires_grad=True)
    opt = opt_cls([p], **kw)
    p.grad = torch.randn_like(p)
    opt.step()
    tensors = [v for v in opt.state[p].values() if torch.is_tensor(v) and v.numel() > 1]
    return sum(t.numel() * t.element_size() for t in tensors) / p.numel()


def test_optimizer_state_bytes(bank):
    x = q(bank, "sft-opt-state-7b")
    adamw = state_bytes_per_param(torch.optim.AdamW, lr=1e-3)
    assert adamw == 8  # exp_avg and exp_avg_sq in fp32; decoupled decay adds no state
    assert close(x, 7e9 * adamw / 1e9)
    assert state_bytes_per_param(torch.optim.SGD, lr=1e-3, momentum=0.9) == 4
    assert 7e9 * 4 / 1e9 == 28 and 7e9 * 2 / 1e9 == 14
    assert 7e9 * (2 + 2 + 4 + 8) / 1e9 == 112


def test_adafactor_factored(bank):
    x = q(bank, "sft-adafactor-factored")
    n, m = 4096, 11008
    assert n * m == 45_088_768
    assert close(x, n + m)
    # torch's Adafactor really keeps one row and one column vector for a matrix
    p = torch.zeros(48, 20, requires_grad=True)
    opt = torch.optim.Adafactor([p], lr=1e-2)
    p.grad = torch.randn_like(p)
    opt.step()
    sizes = sorted(v.numel() for v in opt.state[p].values() if torch.is_tensor(v) and v.dim() > 0 and v.numel() > 1)
    assert sum(sizes) == 48 + 20
    # the rank-1 estimate R Cᵀ / (1ᵀR) reproduces the row and column sums of the squared gradients
    g2 = torch.rand(48, 20, dtype=torch.float64)
    r, c = g2.sum(1), g2.sum(0)
    v_hat = torch.outer(r, c) / r.sum()
    assert torch.allclose(v_hat.sum(1), r) and torch.allclose(v_hat.sum(0), c)
    assert abs((n + m) / (n * m) * 100 - 0.03) < 0.005


def test_adamw_decoupled_decay(bank):
    x = q(bank, "sft-adamw-decay-numeric")
    lr, wd, steps = 3e-4, 0.1, 10_000
    assert close(x, (1 - lr * wd) ** steps)
    assert abs(math.exp(-0.3) - 0.741) < 5e-4
    p = torch.ones(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.AdamW([p], lr=lr, weight_decay=wd)
    for _ in range(steps):
        p.grad = torch.zeros_like(p)
        opt.step()
    assert close(x, p.item())
    # Adam + L2: the decay term is normalised by sqrt(v_hat), a step of about lr, ten times lr*wd at theta = 1
    p2 = torch.ones(1, dtype=torch.float64, requires_grad=True)
    opt2 = torch.optim.Adam([p2], lr=lr, weight_decay=wd)
    p2.grad = torch.zeros_like(p2)
    opt2.step()
    assert abs((1 - p2.item()) / (lr * wd) - 10) < 0.01


def test_cpt_replay_tokens(bank):
    x = q(bank, "sft-cpt-replay-tokens")
    total = 38 / 0.95
    assert close(x, total)
    assert abs(total * 0.05 - 2) < 1e-9
    assert abs((38 * 1.05 - 38) / (38 * 1.05) - 0.048) < 5e-4


def test_vocab_resize_shape(bank):
    x = q(bank, "sft-vocab-resize-shape")
    with torch.device("meta"):
        lm_head = torch.nn.Linear(4096, 49953, bias=False)
        embed = torch.nn.Embedding(49953, 4096)
    want = tuple(int(d) for d in re.findall(r"\d+", x.shape))
    assert tuple(lm_head.weight.shape) == want == tuple(embed.weight.shape)
    new = 49953 - 32000
    assert new == 17953
    assert abs(2 * new * 4096 / 1e6 - 147) < 0.5
    assert math.ceil(49953 / 64) * 64 == 49984


def test_lion_moves_every_coordinate_by_lr():
    """One Lion step (Chen et al., Program 1) with weight decay 0: |Δθ| = lr on every coordinate."""
    g = torch.Generator().manual_seed(0)
    theta = torch.randn(1000, generator=g, dtype=torch.float64)
    m = torch.randn(1000, generator=g, dtype=torch.float64)
    grad = torch.randn(1000, generator=g, dtype=torch.float64)
    lr, b1, b2 = 1e-4, 0.9, 0.99
    c = b1 * m + (1 - b1) * grad
    new = theta - lr * torch.sign(c)
    m_next = b2 * m + (1 - b2) * grad
    assert torch.allclose((new - theta).abs(), torch.full_like(theta, lr))
    assert not torch.allclose(m_next, c)  # the carried momentum uses β2, the update direction β1


def newton_schulz5(G: torch.Tensor, steps: int = 5) -> torch.Tensor:
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G / (G.norm() + 1e-7)
    transposed = X.shape[0] > X.shape[1]
    if transposed:
        X = X.T
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if transposed else X


def test_muon_newton_schulz_approximates_polar_factor():
    g = torch.Generator().manual_seed(0)
    for shape in [(512, 128), (128, 512), (256, 96)]:
        G = torch.randn(*shape, generator=g, dtype=torch.float64)
        X = newton_schulz5(G)
        s = torch.linalg.svdvals(X)
        assert 0.6 < s.min() and s.max() < 1.25, (shape, s.min(), s.max())
        U, _, Vh = torch.linalg.svd(G, full_matrices=False)
        polar = U @ Vh
        cos = (X * polar).sum() / (X.norm() * polar.norm())
        assert cos > 0.98, (shape, cos)
        # the odd polynomial keeps the singular vectors: X = U p(S) Vᵀ
        assert torch.allclose(U.T @ X @ Vh.T, torch.diag(torch.diagonal(U.T @ X @ Vh.T)), atol=1e-6)
    # bf16, as in practice, still lands in the same band
    Gb = torch.randn(512, 128, generator=g).bfloat16()
    sb = torch.linalg.svdvals(newton_schulz5(Gb).float())
    assert 0.5 < sb.min() and sb.max() < 1.3


def test_muon_rms_matching_scale():
    """Moonlight's 0.2·sqrt(max(A, B)) scale gives an orthogonalised update an RMS of about 0.2 (AdamW's typical)."""
    A, B = 1024, 256
    g = torch.Generator().manual_seed(1)
    U, _, Vh = torch.linalg.svd(torch.randn(A, B, generator=g, dtype=torch.float64), full_matrices=False)
    update = (U @ Vh) * 0.2 * math.sqrt(max(A, B))
    rms = update.pow(2).mean().sqrt().item()
    assert abs(rms - 0.2) < 1e-9  # ||UVᵀ||_F² = min(A, B), so RMS = 0.2·sqrt(max·min / (A·B)) = 0.2
    if hasattr(torch.optim, "Muon"):
        import inspect

        assert "adjust_lr_fn" in inspect.signature(torch.optim.Muon).parameters
