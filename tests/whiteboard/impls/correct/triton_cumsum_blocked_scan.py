"""Prefix sum in Triton by fixed blocks with a running carry; reductions looped over blocks."""

import torch
import triton
import triton.language as tl


@triton.jit
def scan_blocks(x_ptr, out_ptr, n, sx, so, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = tl.zeros((), tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * sx + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + row * so + offs, carry + tl.cumsum(x, axis=0), mask=offs < n)
        carry += tl.sum(x, axis=0)


@triton.jit
def reduce_blocks(x_ptr, out_ptr, n, sx, MAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if MAX:
        acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    else:
        acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        if MAX:
            acc = tl.maximum(acc, tl.load(x_ptr + row * sx + offs, mask=offs < n, other=-float("inf")))
        else:
            acc += tl.load(x_ptr + row * sx + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.max(acc, axis=0) if MAX else tl.sum(acc, axis=0))


def cumsum(x):
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    scan_blocks[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=32)
    return out


def _reduce(x, is_max):
    out = torch.empty((x.shape[0],), dtype=x.dtype, device=x.device)
    reduce_blocks[(x.shape[0],)](x, out, x.shape[1], x.stride(0), MAX=is_max, BLOCK=32)
    return out


def row_sum(x):
    return _reduce(x, False)


def row_max(x):
    return _reduce(x, True)
