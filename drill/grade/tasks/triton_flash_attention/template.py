import math

import torch
import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
                           sqb, sqh, sqt, sqd, skb, skh, skt, skd, svb, svh, svt, svd, sob, soh, sot, sod,
                           H, T, sm_scale,
                           CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """One program per (block of BLOCK_M queries, batch * head): load the query block (masked), walk the key
    blocks with an online softmax (running max m, running sum l, accumulator, rescaled when m grows), then
    store o = acc / l and lse = m + ln(l)."""
    pass


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale=None):
    """FlashAttention's forward for q, k, v [B, H, T, D] (D in 16, 32, 64) by your own Triton kernel: (o, lse).

    o = softmax(q k^T * sm_scale, masked causally when causal) v, [B, H, T, D] in q's dtype;
    lse = the natural log of each row's sum of exp(scaled scores), float32 [B, H, T].
    sm_scale defaults to 1 / sqrt(D). T is any length (1, 17, 129...), q, k, v may be strided views, and
    fp16 inputs must accumulate in float32. Launch over the grid (triton.cdiv(T, BLOCK_M), B * H). No torch
    softmax, exp or matmul in the launcher: the kernel computes.
    """
    raise NotImplementedError
