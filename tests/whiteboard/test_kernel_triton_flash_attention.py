"""triton_flash_attention graded for real under Triton's interpreter: correct kernels in styles other than the
solution pass, broken ones in forms other than the mutants get their code, an out-of-bounds store is named.

Each case is a whole grade (tens of interpreted launches, seconds each on a busy machine), so all run in CI's
slow pass: the regular run grades the task's solution (test_exercises.py) within the suite's 6-minute budget.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton", reason="Triton is not installed: pip install 'llm-drill[kernels]'")

from drill.errors import DrillError  # noqa: E402
from drill.grade import kernel_env  # noqa: E402
from drill.grade.battery import run_battery  # noqa: E402

TASK = "triton_flash_attention"

# Strides as tuples, base 2 (scores pre-scaled by log2(e), lse converted back), BLOCK_M 32 < BLOCK_N 64.
EXP2 = '''\
import math

import torch
import triton
import triton.language as tl

@triton.jit
def _fwd(Q, K, V, O, L, s_q, s_k, s_v, s_o, H, T, qk_scale,
         CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Strides as tuples, base-2 exponentials (scores pre-scaled by log2(e)); lse converted back to the natural log."""
    start_m, off_hz = tl.program_id(0), tl.program_id(1)
    b, h = off_hz // H, off_hz % H
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + b * s_q[0] + h * s_q[1] + offs_m[:, None] * s_q[2] + offs_d[None, :] * s_q[3],
                mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    hi = tl.minimum((start_m + 1) * BM, T) if CAUSAL else T
    for start_n in range(0, hi, BN):
        keys = start_n + offs_n
        k = tl.load(K + b * s_k[0] + h * s_k[1] + keys[None, :] * s_k[2] + offs_d[:, None] * s_k[3],
                    mask=keys[None, :] < T, other=0.0)
        qk = tl.dot(q, k, input_precision="ieee") * qk_scale  # log2 units
        keep = (start_n + offs_n)[None, :] < T
        if CAUSAL:
            keep = keep & ((start_n + offs_n)[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, -float("inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + b * s_v[0] + h * s_v[1] + keys[:, None] * s_v[2] + offs_d[None, :] * s_v[3],
                    mask=keys[:, None] < T, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_ij
    tl.store(O + b * s_o[0] + h * s_o[1] + offs_m[:, None] * s_o[2] + offs_d[None, :] * s_o[3],
             (acc / l_i[:, None]).to(O.dtype.element_ty), mask=offs_m[:, None] < T)
    tl.store(L + off_hz * T + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453, mask=offs_m < T)


def flash_attention(q, k, v, causal=False, sm_scale=None):
    B, H, T, D = q.shape
    scale = (1 / math.sqrt(D) if sm_scale is None else sm_scale) * 1.4426950408889634
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((B, H, T), device=q.device, dtype=torch.float32)
    BM, BN = 32, 64
    _fwd[(triton.cdiv(T, BM), B * H)](q, k, v, o, lse, q.stride(), k.stride(), v.stride(), o.stride(), H, T, scale,
                                       CAUSAL=causal, D=D, BM=BM, BN=BN)
    return o, lse
'''

# Tutorial-like: blocks below the diagonal unmasked, p zeroed where masked, BLOCK_M 64 > BLOCK_N 32, unit last stride.
TWO_STAGE = '''\
import math

import torch
import triton
import triton.language as tl


@triton.jit
def attn_kernel(Q, K, V, O, LSE, sqb, sqh, sqt, skb, skh, skt, svb, svh, svt, sob, soh, sot, H, T, scale,
                CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """As the tutorial splits it when causal: key blocks wholly below the diagonal need no causal mask, only the
    blocks that cross it do; p is zeroed where masked instead of s set to -inf."""
    m_blk, bh = tl.program_id(0), tl.program_id(1)
    b, h = bh // H, bh % H
    rows = m_blk * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqt + d[None, :], mask=rows[:, None] < T, other=0.0)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    m_i = tl.full([BM], -1.0e30, dtype=tl.float32)
    below = m_blk * BM // BN * BN if CAUSAL else 0  # key blocks before this one lie wholly below the diagonal
    hi = tl.minimum((m_blk + 1) * BM, T) if CAUSAL else T
    for start in range(0, hi, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(K + b * skb + h * skh + keys[:, None] * skt + d[None, :], mask=keys[:, None] < T, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        ok = keys[None, :] < T
        if start >= below:
            ok = ok & ((keys[None, :] <= rows[:, None]) | (not CAUSAL))
        s = tl.where(ok, s, -1.0e30)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.where(ok, tl.exp(s - m_new[:, None]), 0.0)
        corr = tl.exp(m_i - m_new)
        v = tl.load(V + b * svb + h * svh + keys[:, None] * svt + d[None, :], mask=keys[:, None] < T, other=0.0)
        acc = acc * corr[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        l_i = l_i * corr + tl.sum(p, 1)
        m_i = m_new
    live = rows < T
    tl.store(O + b * sob + h * soh + rows[:, None] * sot + d[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=live[:, None])
    tl.store(LSE + bh * T + rows, m_i + tl.log(l_i), mask=live)


def flash_attention(q, k, v, causal=False, sm_scale=None):
    """Last dims must be unit-stride here: q, k, v are made so (a copy only when they are not)."""
    B, H, T, D = q.shape
    q, k, v = (x if x.stride(-1) == 1 else x.contiguous() for x in (q, k, v))
    o = torch.empty((B, H, T, D), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, T), dtype=torch.float32, device=q.device)
    BM, BN = 64, 32
    attn_kernel[(triton.cdiv(T, BM), B * H)](
        q, k, v, o, lse, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2), H, T,
        1.0 / math.sqrt(D) if sm_scale is None else sm_scale, CAUSAL=causal, D=D, BM=BM, BN=BN)
    return o, lse
'''

# (code, source it breaks, the one edit): each a bug the mutants do not write this way.
BROKEN = {
    "per-tile-by-block-index": ("kernel-causal-per-tile", EXP2, [
        ("    hi = tl.minimum((start_m + 1) * BM, T) if CAUSAL else T\n", "    hi = T\n"),
        ("keep & ((start_n + offs_n)[None, :] <= offs_m[:, None])", "keep & (start_n < (start_m + 1) * BM)  # whole key tiles"),
    ]),
    "acc-not-rescaled": ("kernel-rescale-forgotten", EXP2, [("acc = acc * alpha[:, None] + tl.dot(", "acc = acc + tl.dot(")]),
    "lse-without-max": ("kernel-lse-wrong", TWO_STAGE, [("m_i + tl.log(l_i), mask=live)", "tl.log(l_i), mask=live)")]),
    "o-store-unmasked": ("kernel-mask-missing", TWO_STAGE,
                         [("(acc / l_i[:, None]).to(O.dtype.element_ty),\n             mask=live[:, None])",
                           "(acc / l_i[:, None]).to(O.dtype.element_ty))")]),
    "o-strides-from-q": ("kernel-contiguous-strides", EXP2,
                         [("q.stride(), k.stride(), v.stride(), o.stride()", "q.stride(), k.stride(), v.stride(), q.stride()")]),
}  # fmt: skip
SLOW = pytest.mark.slow  # CI's second run: pytest -m slow


def grade(tmp_path, source: str):
    path = tmp_path / "kernel.py"
    path.write_text(source)
    return run_battery(path, task=TASK, device="cpu")


def broken_source(name: str) -> str:
    _, source, edits = BROKEN[name]
    for old, new in edits:
        assert source.count(old) == 1, (name, old)
        source = source.replace(old, new)
    return source


@SLOW
@pytest.mark.parametrize("source", [TWO_STAGE, EXP2], ids=["two-stage", "exp2"])
def test_other_correct_styles_pass(tmp_path, source):
    report = grade(tmp_path, source)
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert report.diagnosis == []


@SLOW
@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_forms_get_their_code(tmp_path, name):
    report = grade(tmp_path, broken_source(name))
    assert not report.passed
    assert [d.code for d in report.diagnosis] == [BROKEN[name][0]]


@SLOW
def test_an_out_of_bounds_store_is_named_not_crashed(tmp_path):
    report = grade(tmp_path, broken_source("o-store-unmasked"))
    failing = {c.id: c for c in report.checks if c.status == "fail"}
    assert "mask-leak.out-of-bounds" in failing
    assert "would store to" in failing["mask-leak.out-of-bounds"].message and "past the end of O" in failing["mask-leak.out-of-bounds"].message
    assert not [c for c in report.checks if c.status == "error"]
    assert [d.code for d in report.diagnosis] == ["kernel-mask-missing"]


def test_without_triton_the_task_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(kernel_env.util, "find_spec", lambda name: None)
    with pytest.raises(DrillError, match=r"triton_flash_attention is a Triton kernel task .*pip install 'llm-drill\[kernels\]'"):
        kernel_env.require_triton(TASK)
