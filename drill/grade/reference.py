"""Reference attention kernels, with knobs that reproduce each classic bug.

``Variant()`` is the correct kernel; every other field value models one mistake, so the
diagnosis can ask "does the user's output equal the reference with this mistake?".
The grader runs these in float64 for the truth and in the input dtype for the baseline error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Variant:
    scale: str = "sqrt"  # sqrt: 1/sqrt(hd); none; d: 1/hd; sqrt-model: 1/sqrt(d_model); model: 1/d_model
    softmax_dim: int = -1
    mask: str = "keep"  # keep | inverted | after-softmax | transposed | ignored (masked_fill's result discarded)
    causal: int | str = 0  # tril diagonal (0 correct, 1 off by one, -1 blocks self), "triu", or "none" (no mask)
    order: tuple[int, int, int] = (0, 1, 2)  # which projection feeds q, k, v
    split: bool = True  # heads split as view(B, T, H, hd).transpose(1, 2)
    merge: bool = True  # heads merged after transpose(1, 2)
    out_proj: bool = True


CORRECT = Variant()


def scale_factor(variant: Variant, head_dim: int, d_model: int | None) -> float:
    d_model = d_model or head_dim
    return {
        "sqrt": 1 / math.sqrt(head_dim),
        "none": 1.0,
        "d": 1 / head_dim,
        "sqrt-model": 1 / math.sqrt(d_model),
        "model": 1 / d_model,
    }[variant.scale]


def causal_mask(t: int, variant: Variant = CORRECT, device=None) -> torch.Tensor:
    """Boolean [T, T], True = may attend."""
    ones = torch.ones(t, t, dtype=torch.bool, device=device)
    if variant.causal == "none":
        return ones
    if variant.causal == "triu":
        return torch.triu(ones)
    return torch.tril(ones, diagonal=int(variant.causal))


def attention(q, k, v, mask=None, variant: Variant = CORRECT, d_model: int | None = None):
    """softmax(q k^T * scale, masked) v; returns (output, weights)."""
    scores = (q @ k.transpose(-2, -1)) * scale_factor(variant, q.shape[-1], d_model)
    if variant.mask == "ignored":
        mask = None
    if mask is not None:
        if variant.mask == "inverted":
            mask = ~mask
        elif variant.mask == "transposed":
            mask = mask.transpose(-2, -1)
        if variant.mask != "after-softmax":
            scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=variant.softmax_dim)
    if mask is not None and variant.mask == "after-softmax":
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def split_heads(z, heads: int, head_dim: int, variant: Variant = CORRECT):
    """[B, T, heads * head_dim] -> [B, heads, T, head_dim] (``variant.split=False``: the view bug)."""
    b, t = z.shape[:2]
    return z.reshape(b, t, heads, head_dim).transpose(1, 2) if variant.split else z.reshape(b, heads, t, head_dim)


def merge_heads(out, variant: Variant = CORRECT):
    """[B, H, T, hd] -> [B, T, H * hd] (``variant.merge=False``: reshaped without the transpose)."""
    b, h, t, hd = out.shape
    return out.transpose(1, 2).reshape(b, t, h * hd) if variant.merge else out.reshape(b, t, h * hd)


def module_attention(x, params, layout, n_heads: int, mask=None, causal=False, variant: Variant = CORRECT):
    """Multi-head self-attention computed from the user's own projection weights."""
    t, d = x.shape[1:]
    hd = d // n_heads
    projected = layout.project_qkv(x, params)
    q, k, v = (split_heads(projected[i], n_heads, hd, variant) for i in variant.order)
    if causal:
        mask = causal_mask(t, variant, x.device)
    out, weights = attention(q, k, v, mask, variant, d_model=d)
    merged = merge_heads(out, variant)
    return (layout.project_out(merged, params) if variant.out_proj else merged), weights
