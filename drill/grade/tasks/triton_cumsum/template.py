import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    """One program per row: load the row (masked), its inclusive prefix sum (tl.cumsum or a scan of your own), store."""
    pass


@triton.jit
def row_reduce_kernel(x_ptr, out_ptr, n_cols, x_row_stride, IS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    """One program per row: load the row (masked: what must the tail lanes read for a sum, for a max?), reduce, store one value."""
    pass


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive prefix sum along each row of x [M, N] (float32) by your own Triton kernel: out[i, j] = x[i, :j + 1].sum().

    N is any size (1, 17, 129...) and x may be a row-strided view (x.stride(0) > N). No torch.cumsum in the launcher.
    """
    raise NotImplementedError


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of each row of x [M, N]: shape [M], by your own kernel (no torch.sum)."""
    raise NotImplementedError


def row_max(x: torch.Tensor) -> torch.Tensor:
    """The max of each row of x [M, N]: shape [M], by your own kernel (no torch.max / amax); rows may be all negative."""
    raise NotImplementedError
