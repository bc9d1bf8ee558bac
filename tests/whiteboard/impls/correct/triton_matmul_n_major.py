import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Grid axis 0 over the tiles of N, axis 1 over those of M (and the ids read to match); pointers advance along K."""
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_tile = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        remaining = K - k * BLOCK_K
        a = tl.load(a_tile, mask=(offs_m[:, None] < M) & (offs_k[None, :] < remaining), other=0.0).to(tl.float32)
        b = tl.load(b_tile, mask=(offs_k[:, None] < remaining) & (offs_n[None, :] < N), other=0.0).to(tl.float32)
        acc += tl.dot(a, b)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    inside = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=inside)


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = a.new_empty((M, N))
    BLOCK_M, BLOCK_N, BLOCK_K = 16, 64, 32
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))
    matmul_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c
