"""Fact checks for questions/distributed-training.yaml and questions/training.yaml.

Every numeric answer is recomputed from first principles and every shape from real torch code.
The runnable claims are run: a simulated ring all-reduce counts what each rank sends; Megatron's
column/row splits reproduce the unsplit MLP and attention with one sum per block; GPipe and 1F1B
schedules are simulated to measure the bubble and the micro-batches in flight; checkpointing
runs the forward twice; gradient accumulation equals the full batch; bf16 rounding loses small
updates; clipping keeps the direction; z-loss, the cosine schedule and GPT-2's init are computed.
Each reference answer must hit every key point's keywords in its own language.
"""

from __future__ import annotations

import math
import re
import unicodedata

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOPICS = {"distributed-training": "dist", "training": "train"}
_NOISE = str.maketrans({c: None for c in " \t\r\n^·*×∘"} | {"−": "-", "–": "-"})


def _fold(text: str) -> str:
    """Case, width, spacing and formula marks folded, as a typed answer is matched."""
    return unicodedata.normalize("NFKC", text).lower().translate(_NOISE)


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of this module's own files (newer files share the topics and have fact tests of their own)."""
    return {qid: x for qid, x in bank.questions.items() if bank.origins[qid][0].stem in TOPICS}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


# --------------------------------------------------------------- structure ---


def test_topics_are_big_enough_and_mixed(mine):
    for topic in TOPICS:
        qs = [x for x in mine.values() if x.topic == topic]
        assert len(qs) >= 25, topic
        assert {x.level for x in qs} == {"L1", "L2", "L3"}, topic
        assert sum(x.objective for x in qs) / len(qs) >= 0.45, topic
        pitch = [x for x in qs if "pitch" in x.tags]
        assert [x.id for x in pitch] == [f"{topic}-pitch"], topic


def test_ids_carry_the_topic_prefix(mine):
    for x in mine.values():
        assert x.id.startswith(TOPICS[x.topic]), x.id


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[\d.,]+", kw.strip()), (x.id, kw)  # a bare number matches anything


def test_reference_answers_hit_every_key_point_in_their_own_language(mine):
    for x in mine.values():
        for lang in ("en", "zh"):
            text = _fold(getattr(x.answer, lang))
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(_fold(w) in text for w in words), (x.id, lang, i, words)


def test_follow_ups_go_deeper_or_sideways(mine, bank):
    order = {"L1": 1, "L2": 2, "L3": 3}
    for x in mine.values():
        for f in x.follow_ups:
            assert order[bank.questions[f].level] >= order[x.level], (x.id, f)


def test_numeric_answers_show_their_value(mine):
    for x in mine.values():
        if x.type != "numeric":
            continue
        v = x.value
        shown = {f"{v:g}", f"{v:,.0f}", f"{v:,}"}
        for lang in ("en", "zh"):
            assert any(s in getattr(x.answer, lang) for s in shown), (x.id, lang, shown)


NUMERIC_CHECKED = {
    "dist-adam-bytes-per-param",
    "dist-ring-allreduce-volume",
    "dist-tp-allreduce-count",
    "dist-pipeline-bubble",
    "dist-recompute-cost",
    "dist-grad-accum-steps",
    "dist-interleaved-bubble",
    "dist-zero-stage-memory",
    "dist-activation-memory",
    "dist-layout-microbatches",
    "dist-checkpoint-interval",
}
SHAPE_CHECKED = {"dist-tp-local-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED | TRAIN_NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


# ------------------------------------------------------ model-state memory ---


def adam_bytes_per_param() -> int:
    """Bytes of state one parameter really costs: a bf16 weight and gradient, plus the fp32 master
    weight and the two moments torch's Adam keeps for it."""
    master = torch.zeros(10, dtype=torch.float32, requires_grad=True)
    opt = torch.optim.Adam([master])
    master.grad = torch.ones_like(master)
    opt.step()
    moments = sum(t.element_size() * t.numel() for t in opt.state[master].values() if t.dim() > 0) // master.numel()
    half = torch.zeros(1, dtype=torch.bfloat16).element_size()
    return half + half + master.element_size() + moments


def test_adam_bytes_per_param(bank):
    x = q(bank, "dist-adam-bytes-per-param")
    assert adam_bytes_per_param() == 16
    assert close(x, adam_bytes_per_param())
    assert 16 * 7.5 == 120 and math.isclose(16 * 70e9, 1.12e12)


def zero_bytes(psi: float, n: int, stage: int, k: int = 12) -> float:
    """Per-GPU model states under ZeRO (Rajbhandari et al. 2020, §5): weights 2Ψ, gradients 2Ψ, optimizer KΨ."""
    weights, grads, opt = 2 * psi, 2 * psi, k * psi
    if stage >= 1:
        opt /= n
    if stage >= 2:
        grads /= n
    if stage >= 3:
        weights /= n
    return weights + grads + opt


def test_zero_stage_memory(bank):
    x = q(bank, "dist-zero-stage-memory")
    psi, n = 7.5e9, 64
    assert close(x, zero_bytes(psi, n, 2) / 1e9)
    # the paper's Figure 1 numbers, as quoted in the answer
    assert zero_bytes(psi, n, 0) / 1e9 == 120
    assert round(zero_bytes(psi, n, 1) / 1e9, 1) == 31.4
    assert round(zero_bytes(psi, n, 3) / 1e9, 1) == 1.9
    for s in ("120", "31.4", "16.6", "1.9"):
        assert s in x.answer.en and s in x.answer.zh


def test_hybrid_shard_memory(bank):
    x = q(bank, "dist-hybrid-shard")
    assert x.correct == 0
    assert zero_bytes(7e9, 8, 3) / 1e9 == 14
    assert round(zero_bytes(7e9, 256, 3) / 1e9, 2) == 0.44
    assert "14 GB" in x.choices[0].en and "0.44 GB" in x.choices[0].en


# ---------------------------------------------------------- collectives ---


def ring_all_reduce(tensors: list) -> tuple[list, list[int]]:
    """A real ring all-reduce (reduce-scatter then all-gather) over ``len(tensors)`` simulated ranks.

    Returns the per-rank results and the number of elements each rank sent.
    """
    n = len(tensors)
    chunks = [list(t.clone().chunk(n)) for t in tensors]
    sent = [0] * n
    for step in range(n - 1):  # reduce-scatter: after it, rank r owns the full sum of chunk (r + 1) % n
        msgs = [(r, (r - step) % n, chunks[r][(r - step) % n].clone()) for r in range(n)]
        for r, c, payload in msgs:
            chunks[(r + 1) % n][c] += payload
            sent[r] += payload.numel()
    for step in range(n - 1):  # all-gather: pass the finished chunks around the ring
        msgs = [(r, (r + 1 - step) % n, chunks[r][(r + 1 - step) % n].clone()) for r in range(n)]
        for r, c, payload in msgs:
            chunks[(r + 1) % n][c] = payload
            sent[r] += payload.numel()
    return [torch.cat(c) for c in chunks], sent


def test_ring_all_reduce_volume(bank):
    x = q(bank, "dist-ring-allreduce-volume")
    n, size = 8, 64
    torch.manual_seed(0)
    grads = [torch.randn(size) for _ in range(n)]
    results, sent = ring_all_reduce(grads)
    total = torch.stack(grads).sum(0)
    for r in results:
        assert torch.allclose(r, total, atol=1e-5)
    assert sent == [2 * (n - 1) * size // n] * n  # 2(N-1)/N of the buffer per rank
    assert close(x, 2 * (n - 1) / n * 2.0)  # a 2 GB buffer


def test_zero_communication_is_2psi_then_3psi(bank):
    """Reduce-scatter and all-gather each move (N-1)/N of the buffer per rank: ZeRO-2 = 2Ψ, ZeRO-3 = 3Ψ."""
    x = q(bank, "dist-zero-comm-volume")
    n, psi = 8, 64
    _, sent = ring_all_reduce([torch.ones(psi) for _ in range(n)])
    reduce_scatter = all_gather = sent[0] // 2
    assert reduce_scatter == (n - 1) * psi // n
    dp = zero2 = reduce_scatter + all_gather
    zero3 = all_gather + all_gather + reduce_scatter  # gather for forward, again for backward, scatter grads
    assert zero2 == dp and zero3 / dp == 1.5
    assert x.correct == 0 and "1.5" in x.choices[0].en


# ---------------------------------------------------- tensor parallelism ---


def test_megatron_splits_reproduce_the_layer_with_one_sum_per_block(bank):
    """Column-split A, row-split B: each shard's GeLU(X A_i) B_i is a partial sum, and ONE sum (the forward
    all-reduce g) gives the unsplit MLP. Attention split by heads is the same. In the backward, the input
    gradient is the sum of the shards' input gradients (the all-reduce of f). 2 blocks x (1 + 1) = 4."""
    torch.manual_seed(0)
    t, d, heads, s = 4, 32, 8, 6
    xx = torch.randn(s, d, dtype=torch.float64, requires_grad=True)
    a, b = torch.randn(d, 4 * d, dtype=torch.float64), torch.randn(4 * d, d, dtype=torch.float64)
    full = F.gelu(xx @ a) @ b
    parts = [F.gelu(xx @ ai) @ bi for ai, bi in zip(a.chunk(t, dim=1), b.chunk(t, dim=0))]
    assert torch.allclose(sum(parts), full)
    # a row split of A would need the sum BEFORE the nonlinearity (dist-megatron-column-first)
    row_parts = [F.gelu(xi @ ai) for xi, ai in zip(xx.chunk(t, dim=1), a.chunk(t, dim=0))]
    assert not torch.allclose(sum(row_parts), F.gelu(xx @ a))
    assert q(bank, "dist-megatron-column-first").correct == 0

    # attention, heads split across t shards, output projection row-split
    wq, wk, wv, wo = (torch.randn(d, d, dtype=torch.float64) for _ in range(4))
    dh = d // heads

    def attn(x_, wq_, wk_, wv_, wo_):
        h = wq_.shape[1] // dh
        qq, kk, vv = ((x_ @ w).view(s, h, dh).transpose(0, 1) for w in (wq_, wk_, wv_))
        o = torch.softmax(qq @ kk.transpose(1, 2) / math.sqrt(dh), -1) @ vv
        return o.transpose(0, 1).reshape(s, h * dh) @ wo_

    full_attn = attn(xx, wq, wk, wv, wo)
    shards = zip(wq.chunk(t, 1), wk.chunk(t, 1), wv.chunk(t, 1), wo.chunk(t, 0))
    attn_parts = [attn(xx, *w) for w in shards]
    assert torch.allclose(sum(attn_parts), full_attn)

    # backward: dL/dX of the whole = sum over shards of each shard's dL/dX
    grad_full = torch.autograd.grad(full.sum(), xx)[0]
    shard_grads = [torch.autograd.grad(p.sum(), xx)[0] for p in parts]
    assert torch.allclose(sum(shard_grads), grad_full)

    blocks, per_block = 2, 2  # attention and MLP; one forward sum (g) + one backward sum (f) each
    assert close(q(bank, "dist-tp-allreduce-count"), blocks * per_block)


def test_tp_local_shape(bank):
    x = q(bank, "dist-tp-local-shape")
    with torch.device("meta"):
        fc1 = torch.nn.Linear(4096, 16384)
        shard_w = fc1.weight.chunk(8, dim=0)[0]  # nn.Linear stores [out, in]: a column split of A = W^T
        out = torch.randn(2, 2048, 4096) @ shard_w.T
    assert list(out.shape) == [2, 2048, 2048]
    assert x.shape.replace(" ", "") == str(list(out.shape)).replace(" ", "")


# ------------------------------------------------------------- pipelines ---


def simulate_pipeline(p: int, m: int, schedule: str, tf: float = 1.0, tb: float = 2.0):
    """Event-driven simulation of a synchronous pipeline. Returns (step time, busy time per stage,
    peak micro-batches whose activations a stage holds)."""
    orders = []
    for s in range(p):
        if schedule == "gpipe":
            ops = [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
        else:  # 1F1B: warm-up forwards, then alternate, then cool-down backwards
            warm = min(p - s - 1, m)
            ops = [("F", i) for i in range(warm)]
            f, b = warm, 0
            while b < m:
                if f < m:
                    ops.append(("F", f))
                    f += 1
                ops.append(("B", b))
                b += 1
        orders.append(ops)
    done: dict = {}
    free = [0.0] * p
    idx = [0] * p
    held = [0] * p
    peak = [0] * p
    while any(idx[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if idx[s] == len(orders[s]):
                continue
            kind, i = orders[s][idx[s]]
            dep = ("F", s - 1, i) if kind == "F" else (("B", s + 1, i) if s < p - 1 else ("F", s, i))
            if kind == "F" and s == 0:
                dep = None
            if dep is not None and dep not in done:
                continue
            start = max(free[s], done[dep] if dep else 0.0)
            free[s] = start + (tf if kind == "F" else tb)
            done[(kind, s, i)] = free[s]
            held[s] += 1 if kind == "F" else -1
            peak[s] = max(peak[s], held[s])
            idx[s] += 1
            progressed = True
        assert progressed, "deadlock"
    return max(free), m * (tf + tb), peak


@pytest.mark.parametrize("p,m", [(4, 12), (4, 8), (8, 16), (2, 3)])
def test_gpipe_and_1f1b_have_the_same_bubble_but_not_the_same_memory(p, m):
    for schedule in ("gpipe", "1f1b"):
        step, busy, peak = simulate_pipeline(p, m, schedule)
        assert math.isclose(step, (m + p - 1) * 3.0)
        assert math.isclose(1 - busy / step, (p - 1) / (m + p - 1))
        if schedule == "gpipe":
            assert peak == [m] * p
        else:
            assert peak == [min(p - s, m) for s in range(p)]  # stage 0 holds the most


def test_pipeline_bubble(bank):
    x = q(bank, "dist-pipeline-bubble")
    step, busy, _ = simulate_pipeline(4, 12, "gpipe")
    assert close(x, 1 - busy / step)
    assert (4 - 1) / 12 == 0.25  # the Megatron-style ratio named in the pitfall


def test_interleaved_bubble(bank):
    x = q(bank, "dist-interleaved-bubble")
    p, m, v = 8, 16, 2
    assert close(x, (1 / v) * (p - 1) / m)
    assert (p - 1) / m == 0.4375 and m % p == 0


def test_layout_microbatches(bank):
    x = q(bank, "dist-layout-microbatches")
    dp = 512 // (8 * 4)
    assert dp == 16
    assert close(x, 1536 / (dp * 1))
    step, busy, _ = simulate_pipeline(4, 96, "1f1b")
    assert round(100 * (1 - busy / step)) == 3 and round(100 * 3 / 96, 1) == 3.1


def test_grad_accum_steps_and_equivalence(bank):
    x = q(bank, "dist-grad-accum-steps")
    assert close(x, 1024 / (4 * 32))
    # accumulating micro-batch losses scaled by 1/steps gives the full-batch gradient
    torch.manual_seed(0)
    lin = torch.nn.Linear(5, 1)
    data, target = torch.randn(32, 5), torch.randn(32, 1)
    F.mse_loss(lin(data), target).backward()
    full = lin.weight.grad.clone()
    lin.zero_grad()
    for xb, yb in zip(data.chunk(8), target.chunk(8)):
        (F.mse_loss(lin(xb), yb) / 8).backward()
    assert torch.allclose(lin.weight.grad, full, atol=1e-6)


# ------------------------------------------------ activations, recompute ---


def test_recompute_runs_the_forward_twice(bank):
    x = q(bank, "dist-recompute-cost")
    from torch.utils.checkpoint import checkpoint

    calls = []
    block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 8))
    block[0].register_forward_hook(lambda *_: calls.append(1))
    inp = torch.randn(4, 8, requires_grad=True)
    checkpoint(block, inp, use_reentrant=False).sum().backward()
    assert len(calls) == 2  # forward, then again during backward
    assert close(x, 100 * ((2 + 4 + 2) / (2 + 4) - 1))
    assert 96 / 72 == (2 + 4 + 2) / (2 + 4)  # Narayanan et al.'s 96 vs 72 factor


def test_activation_memory(bank):
    x = q(bank, "dist-activation-memory")
    s, b, h, a = 2048, 1, 4096, 32
    assert 5 * a * s / h == 80
    total = s * b * h * (34 + 5 * a * s / h)
    assert total == 956_301_312
    assert close(x, total / 1e9)
    assert round(s * b * h * 34 / 1e9, 3) == 0.285 and round(2 * s * b * h / 1e9, 3) == 0.017
    assert round(80 * total / 1e9, 1) == 76.5 and "76.5 GB" in x.answer.en and "76.5 GB" in x.answer.zh


def test_selective_recompute_is_cheap_for_gpt3():
    """The attention core (QKᵀ and AV, 4·b·s²·h FLOPs) is a few percent of a GPT-3 layer's forward."""
    s, h = 2048, 12288
    core = 4 * s * s * h
    layer = 24 * s * h * h + core
    assert core / layer < 0.03


def test_layout_design_numbers(bank):
    x = q(bank, "dist-layout-design")
    s, h, t, layers = 8192, 8192, 8, 80
    per_layer = 34 * s * h / t
    assert round(per_layer / 1e6) == 285 and round(layers * per_layer / 1e9) == 23
    assert 70e9 / t == 8.75e9 and 2 * 8.75e9 / 1e9 == 17.5
    assert round(12 * 8.75e9 / 128 / 1e9, 1) == 0.8
    assert 4 * 2**20 // 8192 == 512 and 512 // 128 == 4
    step_flops = 6 * 70e9 * 4 * 2**20
    assert round(step_flops / 1e18, 1) == 1.8
    assert round(step_flops / (1024 * 989e12 * 0.40), 1) == 4.3  # H100 dense bf16 peak 989 TFLOP/s
    assert round(2 * 17.5 / 50, 1) == 0.7
    assert "59 GB" in x.answer.en


def test_checkpoint_interval(bank):
    x = q(bank, "dist-checkpoint-interval")
    c, m = 60.0, 3 * 3600.0
    tau = math.sqrt(2 * c * m)
    assert round(tau) == 1138 and close(x, tau / 60)
    # Young's tau minimises checkpoint overhead + expected lost work per unit time
    cost = lambda t: c / t + t / (2 * m)  # noqa: E731
    assert all(cost(tau) <= cost(tau * f) for f in (0.5, 0.8, 1.25, 2.0))
    assert round(100 * c / tau) == 5 and round(100 * tau / (2 * m)) == 5
    assert round(54 * 24 / 419, 1) == 3.1  # Llama 3: one unexpected interruption every ~3 hours


def test_zero_bubble_split_is_exact():
    """B (input gradient) and W (weight gradient) computed separately equal the joint backward."""
    torch.manual_seed(0)
    w = torch.randn(6, 4, requires_grad=True)
    xx = torch.randn(3, 6, requires_grad=True)
    loss = (xx @ w).tanh().sum()
    gx, gw = torch.autograd.grad(loss, (xx, w), retain_graph=True)
    gx_only = torch.autograd.grad(loss, xx, retain_graph=True)[0]
    gw_only = torch.autograd.grad(loss, w)[0]
    assert torch.equal(gx, gx_only) and torch.equal(gw, gw_only)


# ------------------------------------------------------------- training ---

TRAIN_NUMERIC_CHECKED = {
    "train-bf16-spacing",
    "train-adam-beta2-window",
    "train-grad-clip-numeric",
    "train-weight-tying",
    "train-cosine-lr-numeric",
    "train-z-loss",
    "train-gpt2-residual-init",
    "train-adam-bias-correction",
}


def test_bf16_and_fp16_formats(bank):
    x = q(bank, "train-bf16-vs-fp16")
    bf16, fp16, fp32 = (torch.finfo(t) for t in (torch.bfloat16, torch.float16, torch.float32))
    assert fp16.max == 65504 and round(bf16.max / fp32.max, 2) == 1.0  # bf16 keeps fp32's range
    assert bf16.eps == 2**-7 and fp16.eps == 2**-10  # 7 vs 10 stored mantissa bits
    assert round(fp16.tiny, 6) == 6.1e-5
    assert torch.tensor(2**-24, dtype=torch.float16).item() == 2**-24  # smallest subnormal
    assert torch.tensor(2**-26, dtype=torch.float16).item() == 0.0  # below it: underflow
    assert torch.tensor(1e-30, dtype=torch.bfloat16).item() != 0.0  # bf16 does not underflow there
    assert x.correct == 0 and "65504" in x.choices[0].en


def test_bf16_spacing_and_lost_updates(bank):
    x = q(bank, "train-bf16-spacing")
    one = torch.tensor(1.0, dtype=torch.bfloat16)
    gap = (torch.nextafter(one, torch.tensor(2.0, dtype=torch.bfloat16)) - one).item()
    assert close(x, gap)
    assert (one + 0.001).item() == 1.0  # rounds back
    w16, w32 = one.clone(), torch.tensor(1.0)
    for _ in range(100):
        w16 = w16 + torch.tensor(1e-3, dtype=torch.bfloat16)
        w32 = w32 + 1e-3
    assert w16.item() == 1.0 and abs(w32.item() - 1.1) < 1e-5  # the fp32 master copy keeps them
    fp16_one = torch.tensor(1.0, dtype=torch.float16)
    assert (torch.nextafter(fp16_one, torch.tensor(2.0, dtype=torch.float16)) - fp16_one).item() == 2**-10


def test_adam_beta2_window_and_catch_up(bank):
    x = q(bank, "train-adam-beta2-window")
    assert close(x, 1 / (1 - 0.95))
    assert round(1 / (1 - 0.999)) == 1000
    # after a 100x jump in g^2, how much of the new level v has absorbed after 60 steps
    def caught_up(beta2, steps):
        v = 1.0
        for _ in range(steps):
            v = beta2 * v + (1 - beta2) * 100.0
        return (v - 1.0) / 99.0
    assert caught_up(0.95, 60) > 0.95 and caught_up(0.999, 60) < 0.06  # "within tens of steps" vs stale


def test_grad_clip(bank):
    x = q(bank, "train-grad-clip-numeric")
    a = torch.nn.Parameter(torch.zeros(2))
    b = torch.nn.Parameter(torch.zeros(1))
    a.grad, b.grad = torch.tensor([0.6, 0.0]), torch.tensor([math.sqrt(25 - 0.36)])
    before = torch.cat([a.grad, b.grad]).clone()
    total = torch.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert math.isclose(total.item(), 5.0, rel_tol=1e-6)
    assert close(x, a.grad[0].item())
    after = torch.cat([a.grad, b.grad])
    assert torch.allclose(after / after.norm(), before / before.norm())  # the direction is kept


def gpt2_small_params(tied: bool) -> int:
    v, d, ctx, layers = 50257, 768, 1024, 12
    with torch.device("meta"):
        wte, wpe = torch.nn.Embedding(v, d), torch.nn.Embedding(ctx, d)
        blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict(
                {
                    "ln1": torch.nn.LayerNorm(d), "attn": torch.nn.Linear(d, 3 * d), "proj": torch.nn.Linear(d, d),
                    "ln2": torch.nn.LayerNorm(d), "fc": torch.nn.Linear(d, 4 * d), "out": torch.nn.Linear(4 * d, d),
                }
            )
            for _ in range(layers)
        )
        head = torch.nn.Linear(d, v, bias=False)
        if tied:
            head.weight = wte.weight
        model = torch.nn.ModuleList([wte, wpe, blocks, torch.nn.LayerNorm(d), head])
    return sum(p.numel() for p in model.parameters())  # shared tensors are counted once


def test_weight_tying(bank):
    x = q(bank, "train-weight-tying")
    saved = gpt2_small_params(tied=False) - gpt2_small_params(tied=True)
    assert close(x, saved)
    assert round(gpt2_small_params(tied=True) / 1e6) == 124
    assert round(100 * saved / gpt2_small_params(tied=True)) == 31


def test_adamw_decouples_decay_and_adam_l2_does_not():
    """How much weight decay moves each weight over 200 noisy steps. AdamW: the same lr*wd*w for both; Adam+L2:
    the decay term is divided by sqrt(v), so the weight with 1000x larger gradients is barely decayed."""
    sigma = torch.tensor([0.01, 10.0])

    def run(cls, wd):
        torch.manual_seed(0)
        w = torch.nn.Parameter(torch.ones(2))
        opt = cls([w], lr=1e-3, weight_decay=wd)
        for _ in range(200):
            w.grad = torch.randn(1) * sigma  # the same noise sequence for every run
            opt.step()
        return w.detach()

    base = run(torch.optim.Adam, 0.0)
    adamw = base - run(torch.optim.AdamW, 0.1)
    adam_l2 = base - run(torch.optim.Adam, 0.1)
    assert torch.allclose(adamw[0], adamw[1], rtol=0.05) and adamw[0] > 0
    assert adam_l2[0] > 20 * adam_l2[1] > 0


def test_cosine_lr(bank):
    x = q(bank, "train-cosine-lr-numeric")
    peak, floor, warm, decay = 3e-4, 3e-5, 2000, 100_000
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=decay, eta_min=floor)
    for _ in range(77_000 - warm):
        opt.step()
        sched.step()
    lr = opt.param_groups[0]["lr"]
    assert math.isclose(lr, floor + 0.5 * (peak - floor) * (1 + math.cos(0.75 * math.pi)), rel_tol=1e-6)
    assert close(x, lr / 1e-5)
    assert lr < peak / 4


def test_z_loss(bank):
    x = q(bank, "train-z-loss")
    logits = torch.zeros(32000, dtype=torch.float64)
    log_z = torch.logsumexp(logits, 0)
    assert close(x, 1e-4 * log_z.item() ** 2)
    assert round(log_z.item(), 2) == 10.37 and round(log_z.item() ** 2, 1) == 107.6
    # shifting the logits by -log Z leaves the cross-entropy unchanged and zeroes the z-loss
    torch.manual_seed(0)
    z = torch.randn(4, 50, dtype=torch.float64) * 3 + 5
    y = torch.randint(0, 50, (4,))
    shifted = z - torch.logsumexp(z, -1, keepdim=True)
    assert torch.allclose(F.cross_entropy(z, y), F.cross_entropy(shifted, y))
    assert torch.allclose(torch.logsumexp(shifted, -1), torch.zeros(4, dtype=torch.float64))


def test_qk_norm_bounds_the_logits():
    """With unit-gain RMS-normalised q and k, |q·k|/sqrt(d) <= sqrt(d) however large the weights grow."""
    torch.manual_seed(0)
    d = 64
    xx = torch.randn(16, d)
    for scale in (1.0, 100.0):
        wq, wk = torch.randn(d, d) * scale, torch.randn(d, d) * scale
        qq, kk = F.rms_norm(xx @ wq, (d,)), F.rms_norm(xx @ wk, (d,))
        raw = (xx @ wq) @ (xx @ wk).T / math.sqrt(d)
        normed = qq @ kk.T / math.sqrt(d)
        assert normed.abs().max() <= math.sqrt(d) + 1e-4
    assert raw.abs().max() > 100 * math.sqrt(d)  # without the norm the logits grow with the weights


def test_gpt2_residual_init(bank):
    x = q(bank, "train-gpt2-residual-init")
    assert close(x, 0.02 / math.sqrt(2 * 48))
    # residual-stream variance after N branches: ~1 + N*s^2 unscaled, ~1 + s^2 with 1/sqrt(N)
    torch.manual_seed(0)
    d, n_branches = 256, 96
    s2 = d * 0.02**2  # variance one branch adds: fan_in * std^2 for unit-variance inputs
    for scaled in (False, True):
        stream = torch.randn(512, d)
        for _ in range(n_branches):
            w = torch.randn(d, d) * 0.02 / (math.sqrt(n_branches) if scaled else 1.0)
            stream = stream + F.rms_norm(stream, (d,)) @ w
        expected = 1 + (s2 if scaled else n_branches * s2)
        assert abs(stream.var().item() / expected - 1) < 0.1


def test_weight_decay_groups(bank):
    x = q(bank, "train-weight-decay-which-params")
    assert x.correct == [0, 1]
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 8))
    no_decay = {n for n, p in model.named_parameters() if p.dim() < 2}
    assert no_decay == {"0.bias", "1.weight", "1.bias", "2.bias"}  # biases and the norm gain


def test_adam_bias_correction(bank):
    x = q(bank, "train-adam-bias-correction")
    b1, b2 = 0.9, 0.95
    assert close(x, (1 - b1) / math.sqrt(1 - b2))
    # torch's Adam (bias-corrected) takes exactly lr on step 1, whatever the gradient's size
    for g in (1e-3, 5.0):
        w = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
        opt = torch.optim.Adam([w], lr=0.1, betas=(b1, b2), eps=0.0)
        w.grad = torch.tensor([g], dtype=torch.float64)
        opt.step()
        assert math.isclose(-w.item(), 0.1, rel_tol=1e-9)
    ratio = [(1 - b1**t) / math.sqrt(1 - b2**t) for t in range(1, 201)]
    assert round(max(ratio), 1) == 1.1 and 15 <= ratio.index(max(ratio)) + 1 <= 25  # "about 1.1 around step 20"
    assert abs(ratio[99] - 1) < 0.01  # "settles at 1 after about a hundred steps"


def test_autocast_dtypes(bank):
    x = q(bank, "train-autocast-fp32-ops")
    assert x.correct == [0, 1, 2]
    t = torch.randn(4, 8)
    lin = torch.nn.Linear(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(t)
        assert y.dtype == torch.bfloat16
        assert F.cross_entropy(y, torch.zeros(4, dtype=torch.long)).dtype == torch.float32
        # the answer's device caveat: CPU autocast keeps these two in bf16
        assert torch.softmax(y, -1).dtype == torch.bfloat16 and F.layer_norm(y, (8,)).dtype == torch.bfloat16
    if torch.cuda.is_available():
        t, lin = t.cuda(), lin.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = lin(t)
            assert y.dtype == torch.bfloat16
            assert torch.softmax(y, -1).dtype == torch.float32
            assert F.layer_norm(y, (8,)).dtype == torch.float32
            assert F.cross_entropy(y, torch.zeros(4, dtype=torch.long, device="cuda")).dtype == torch.float32


def test_grad_scaler_defaults_and_skip(bank):
    import inspect

    x = q(bank, "train-grad-scaler-behaviour")
    defaults = {k: v.default for k, v in inspect.signature(torch.amp.GradScaler.__init__).parameters.items()}
    assert defaults["init_scale"] == 2.0**16 and defaults["growth_factor"] == 2.0
    assert defaults["backoff_factor"] == 0.5 and defaults["growth_interval"] == 2000
    scaler = torch.amp.GradScaler("cpu")
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler.scale(torch.tensor(1.0))  # initialises the scale
    w.grad = torch.tensor([float("inf"), 1.0])
    scaler.step(opt)
    scaler.update()
    assert torch.equal(w.detach(), torch.ones(2))  # the step was skipped
    assert scaler.get_scale() == 2.0**15
    assert x.correct == 0


def test_adam_epsilon_shrinks_small_gradient_updates(bank):
    x = q(bank, "train-adam-epsilon")
    def first_step(grad, eps):
        w = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
        opt = torch.optim.Adam([w], lr=1.0, eps=eps)
        w.grad = torch.tensor([grad], dtype=torch.float64)
        opt.step()
        return -w.item()
    assert math.isclose(first_step(1e-3, 1e-8), 1.0, rel_tol=1e-4)  # scale invariant: step = lr
    assert round(first_step(1e-9, 1e-8), 2) == 0.09  # "about 0.09 eta"
    assert math.isclose(first_step(1e-9, 1e-15), 1.0, rel_tol=1e-5)  # lower epsilon restores it
    assert x.correct == 0


def test_fp8_format_limits(bank):
    x = q(bank, "train-fp8-recipe")
    assert torch.finfo(torch.float8_e4m3fn).max == 448 and torch.finfo(torch.float8_e5m2).max == 57344
    assert "448" in x.answer.en and "57344" in x.answer.en


def test_mup_rule_in_the_choice(bank):
    x = q(bank, "train-mup")
    assert x.correct == 0 and "η/4" in x.choices[0].en
    assert 1024 / 4096 == 1 / 4  # 1/fan_in scaling from width 1024 to 4096
