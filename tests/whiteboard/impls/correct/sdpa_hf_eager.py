"""Hugging Face's eager_attention_forward (Llama/Mistral/Mixtral), as written.

Source: https://github.com/huggingface/transformers/blob/00d4b3d2142cb4ced2f51b90614b5d26bc045015/src/transformers/models/mixtral/modeling_mixtral.py
Adapted: (the wrapper only) the contract's bool mask becomes Hugging Face's additive mask (0 where allowed,
the dtype's min elsewhere, as its mask utilities build it); any leading dims are viewed as [B, H, T, d], the
shape the function expects, and its [B, T, H, dv] result is transposed back; the `module` argument is a stub
with one query head per key head and training=False.
"""
import math
from types import SimpleNamespace
from typing import Optional

import torch
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """
    This is the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep). The hidden states go from (batch,
    num_key_value_heads, seqlen, head_dim) to (batch, num_attention_heads, seqlen, head_dim)
    """
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    scaling: float,
    dropout: float = 0.0,
    **kwargs,
):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()

    return attn_output, attn_weights


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    q4 = q.reshape(-1, 1, *q.shape[-2:])
    k4 = k.expand(*lead, *k.shape[-2:]).reshape(-1, 1, *k.shape[-2:])
    v4 = v.expand(*lead, *v.shape[-2:]).reshape(-1, 1, *v.shape[-2:])
    additive = None
    if mask is not None:
        mask = mask.expand(*lead, q.shape[-2], k.shape[-2]).reshape(-1, 1, q.shape[-2], k.shape[-2])
        additive = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, torch.finfo(q.dtype).min)
    module = SimpleNamespace(num_key_value_groups=1, training=False)
    out, _ = eager_attention_forward(module, q4, k4, v4, additive, scaling=1 / math.sqrt(q.shape[-1]))
    return out.transpose(1, 2).reshape(*lead, q.shape[-2], v.shape[-1])
