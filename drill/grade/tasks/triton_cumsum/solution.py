import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols  # the tail lanes read 0: they come after every real element, so they change no prefix
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * out_row_stride + cols, tl.cumsum(x, axis=0), mask=mask)


@triton.jit
def row_reduce_kernel(x_ptr, out_ptr, n_cols, x_row_stride, IS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if IS_MAX:
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))  # -inf: never the max
        tl.store(out_ptr + row, tl.max(x, axis=0))
    else:
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0))


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive prefix sum along each row of a 2-D tensor."""
    m, n = x.shape
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    cumsum_kernel[(m,)](x, out, n, x.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(n))
    return out


def _row_reduce(x: torch.Tensor, is_max: bool) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    row_reduce_kernel[(m,)](x, out, n, x.stride(0), IS_MAX=is_max, BLOCK=triton.next_power_of_2(n))
    return out


def row_sum(x: torch.Tensor) -> torch.Tensor:
    return _row_reduce(x, False)


def row_max(x: torch.Tensor) -> torch.Tensor:
    return _row_reduce(x, True)
