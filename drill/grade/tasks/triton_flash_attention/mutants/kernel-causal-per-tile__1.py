import math

import torch
import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
                           sqb, sqh, sqt, sqd, skb, skh, skt, skd, svb, svh, svt, svd, sob, soh, sot, sod,
                           H, T, sm_scale,
                           CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)  # a block of BLOCK_M queries
    bh = tl.program_id(1)  # of one (batch, head)
    b, h = bh // H, bh % H
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, D)
    q_base, k_base, v_base = q_ptr + b * sqb + h * sqh, k_ptr + b * skb + h * skh, v_ptr + b * svb + h * svh
    q = tl.load(q_base + rows[:, None] * sqt + dims[None, :] * sqd, mask=rows[:, None] < T, other=0.0)

    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)  # running row max of the scaled scores
    l_i = tl.zeros((BLOCK_M,), tl.float32)  # running sum of exp(score - m_i)
    acc = tl.zeros((BLOCK_M, D), tl.float32)  # running sum of exp(score - m_i) * v
    end = tl.minimum((pid_m + 1) * BLOCK_M, T) if CAUSAL else T  # no key block lies wholly above the diagonal
    k_ptrs = k_base + cols[None, :] * skt + dims[:, None] * skd  # K^T of the first key block: [D, BLOCK_N]
    v_ptrs = v_base + cols[:, None] * svt + dims[None, :] * svd  # [BLOCK_N, D]
    for start in range(0, end, BLOCK_N):
        keys = start + cols
        k = tl.load(k_ptrs, mask=keys[None, :] < T, other=0.0)
        s = tl.dot(q, k, input_precision="ieee") * sm_scale
        visible = keys[None, :] < T
        s = tl.where(visible, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))  # finite: key 0 is visible to every row
        alpha = tl.exp(m_i - m_new)  # rescales what was summed under the old max
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptrs, mask=keys[:, None] < T, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_new
        k_ptrs += BLOCK_N * skt
        v_ptrs += BLOCK_N * svt

    inside = rows < T
    o = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * sot + dims[None, :] * sod, o.to(o_ptr.dtype.element_ty),
             mask=inside[:, None])
    tl.store(lse_ptr + bh * T + rows, m_i + tl.log(l_i), mask=inside)  # natural log: ln(sum exp(s))


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale=None):
    """FlashAttention's forward: one program per (query block, batch * head), an online softmax over key blocks."""
    B, H, T, D = q.shape
    sm_scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    o = torch.empty((B, H, T, D), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, T), dtype=torch.float32, device=q.device)
    BLOCK_M, BLOCK_N = 64, 64
    grid = (triton.cdiv(T, BLOCK_M), B * H)
    flash_attention_kernel[grid](q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), H, T, sm_scale,
                                 CAUSAL=causal, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o, lse
