"""--trace sees every tensor a Triton launch stored into, even when the stored values are the ones the tensor held:
torch.empty hands back a freed block, which after an identical earlier call holds that call's output, so comparing
before and after missed the launch's output now and then (the flash-attention trace lost its lse)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton", reason="Triton is not installed: pip install 'llm-drill[kernels]'")

import torch  # noqa: E402
from traced import the_line, user_context  # noqa: E402

SOURCE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, same_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(out_ptr + i, x, mask=m)
    tl.store(same_ptr + i, x * 0.0, mask=m)


def cumsum(x):
    out = x.clone()
    same = torch.zeros_like(x)
    copy_kernel[(1,)](x, out, same, x.numel(), BLOCK=16)  # launch
    return out, same
'''


def test_a_launch_is_seen_writing_each_tensor_it_stores_into_whatever_the_values(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(SOURCE)
    launch = the_line(path, "# launch")
    with user_context(path, "triton_cumsum") as ctx:
        _, records, raised = ctx.user.trace(ctx.entry, (torch.arange(8.0),), {})
    assert raised is None
    written = [r for r in records if r["line"] == launch]
    # out already held x (a clone) and same already held zeros: the launch stored into both all the same
    assert len(written) == 2, [(r["op"], r["shape"]) for r in records]
    assert all(r["tensor"] is not None and r["shape"] == [8] for r in written)
