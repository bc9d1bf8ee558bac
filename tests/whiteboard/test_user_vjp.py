"""The user side's backward pass (drill.grade.user.server.vjp): the gradients autograd.grad gives with
grad_outputs, bit for bit, without the sympy import that grad_outputs costs every user side."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from drill.grade.user.server import vjp  # noqa: E402

USER_SIDE = Path(__file__).resolve().parents[2] / "drill" / "grade" / "user"


def same(a, b) -> bool:
    return (a is None and b is None) or (a.dtype == b.dtype and torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0))
                                         and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.signbit(), b.signbit()))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_vjp_matches_autograd_with_grad_outputs(dtype):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 4, generator=gen).to(dtype).requires_grad_()
    w = torch.randn(4, 5, generator=gen).to(dtype).requires_grad_()
    unused = torch.randn(3, generator=gen).to(dtype).requires_grad_()
    attn = torch.softmax(x @ w, dim=-1)  # two outputs of one graph, one of them a view
    scaled = (x.transpose(1, 2)[..., :2] * 3).exp()
    g_attn, g_scaled = torch.randn(attn.shape, generator=gen).to(dtype), torch.randn(scaled.shape, generator=gen).to(dtype)
    g_attn[0, 0, 0], g_attn[1, 2, 3], g_scaled[0, 1, 1] = float("inf"), -0.0, float("nan")
    expected = torch.autograd.grad([attn, scaled], [x, w, unused], [g_attn, g_scaled], retain_graph=True, allow_unused=True)
    found = vjp([(attn, g_attn), (scaled, g_scaled)], [x, w, unused])
    assert found[2] is None
    assert all(same(e, f) for e, f in zip(expected, found))
    again = vjp([(attn, g_attn)], [w])  # the graph is kept for the next backward of the same call
    assert same(torch.autograd.grad([attn], [w], [g_attn])[0], again[0])


def test_an_output_that_is_its_own_input_gets_its_gradient():
    x = torch.randn(5, requires_grad=True)
    g = torch.randn(5)
    assert torch.equal(vjp([(x, g)], [x])[0], g)


def test_the_user_sides_backward_imports_no_sympy():
    script = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_drill_user", {str(USER_SIDE / "__init__.py")!r},
                                              submodule_search_locations=[{str(USER_SIDE)!r}])
package = importlib.util.module_from_spec(spec)
sys.modules["_drill_user"] = package
spec.loader.exec_module(package)
import torch
from _drill_user import server
x = torch.randn(3, 3, requires_grad=True)
y = torch.softmax(x @ x, dim=-1)
server.vjp([(y, torch.randn(3, 3))], [x])
print("sympy" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr
