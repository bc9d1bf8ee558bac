"""The kv_cache, flash and block references and rules, below the battery (which test_grade_battery.py runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from drill.grade.context import Context, WrongShape
from drill.grade.layouts import find_layout
from drill.grade.reference import attention, causal_mask
from drill.grade.tasks.block.task import find_block_layout
from drill.grade.tasks.flash.task import FlashVariant, tiled_reference
from drill.grade.user.spy import LargestTensor
from drill.grade.tasks.kv_cache.task import TASK as KV, KVVariant, decode_reference


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("t, block", [(40, 16), (48, 16), (40, 64)])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_reference_is_exact_attention(t, block, causal):
    q, k, v = (randn(2, 3, t, 8, seed=s) for s in range(3))
    mask = causal_mask(t) if causal else None
    assert torch.allclose(tiled_reference(q, k, v, causal, block), attention(q, k, v, mask)[0], atol=1e-12)


def test_missing_rescale_is_right_only_with_one_block():
    q, k, v = (randn(1, 2, 40, 8, seed=s) for s in range(3))
    broken = FlashVariant(rescale="none")
    assert torch.allclose(tiled_reference(q, k, v, False, 64, broken), tiled_reference(q, k, v, False, 64), atol=1e-12)
    assert not torch.allclose(tiled_reference(q, k, v, False, 16, broken), tiled_reference(q, k, v, False, 16))


def test_largest_tensor_counts_storage_not_broadcast_views():
    row = torch.arange(200.0)[:, None]
    with LargestTensor() as spy:
        row.expand(200, 200)
    assert spy.size == 200
    with LargestTensor() as spy:
        torch.ones(200, 200).tril()
    assert spy.size == 40_000 and spy.shape == (200, 200)


def _fused_layout_module(d):
    module = nn.Module()
    module.qkv, module.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
    return module


def test_decode_reference_is_chunking_invariant_and_top_left_is_not():
    d, heads = 12, 3
    module = _fused_layout_module(d)
    layout = find_layout(module, d)
    params = {n: p.detach().double() for n, p in module.named_parameters()}
    x = randn(2, 8, d)
    full = decode_reference(x, params, layout, heads, (8,))
    assert torch.allclose(decode_reference(x, params, layout, heads, (3, 1, 4)), full, atol=1e-12)
    assert torch.allclose(decode_reference(x, params, layout, heads, (1,) * 8), full, atol=1e-12)
    top_left = decode_reference(x, params, layout, heads, (3, 1, 4), KVVariant(align="top-left"))
    assert not torch.allclose(top_left, full)


def test_decode_requires_out_and_cache():
    class NoCache(nn.Module):
        def forward(self, x, cache=None):
            return x

    ctx = Context(path=Path("user.py"), entry=NoCache, device=torch.device("cpu"), user=None)  # a judge-side callable runs here
    with pytest.raises(WrongShape, match=r"not \(out, cache\)"):
        KV.decode(ctx, NoCache(), torch.zeros(1, 3, 4), (2, 1))


def _block(ffn, **extra):
    block = nn.Module()
    block.ln1, block.ln2, block.attn = nn.LayerNorm(12), nn.LayerNorm(12), _fused_layout_module(12)
    if ffn is not None:
        block.ffn = ffn
    for name, layer in extra.items():
        setattr(block, name, layer)
    return block


def test_block_layout_reads_the_activation_or_leaves_it_to_matching():
    tanh = _block(nn.Sequential(nn.Linear(12, 20), nn.GELU(approximate="tanh"), nn.Dropout(0.1), nn.Linear(20, 12)))
    assert find_block_layout(tanh, 12, 20).activation == "gelu-tanh"
    assert (find_block_layout(tanh, 12, 20).fc1, find_block_layout(tanh, 12, 20).fc2) == ("ffn.0", "ffn.3")
    pair = _block(None, c_fc=nn.Linear(12, 20), c_proj=nn.Linear(20, 12))
    assert find_block_layout(pair, 12, 20).activation is None
    wrong_size = _block(nn.Sequential(nn.Linear(12, 20), nn.ReLU(), nn.Linear(20, 12)))
    assert find_block_layout(wrong_size, 12, 24) is None
