import math

import torch
import torch.nn.functional as F
from torch import nn


class LlamaBlock(nn.Module):
    """One LLaMA decoder layer, with Hugging Face's parameter names (LlamaDecoderLayer).

    __init__(d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
      input_layernorm, post_attention_layernorm: RMSNorm(d_model, eps) with a `weight` [d_model];
      self_attn.q_proj [d_model -> n_heads*hd], self_attn.k_proj / v_proj [d_model -> n_kv_heads*hd],
      self_attn.o_proj [n_heads*hd -> d_model]; mlp.gate_proj, mlp.up_proj [d_model -> ffn_dim],
      mlp.down_proj [ffn_dim -> d_model]; hd = d_model // n_heads; no biases anywhere.
    forward(x): x [B, T, d_model] -> [B, T, d_model], causal, positions 0..T-1, no mask argument:
      x = x + attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x)).
      RoPE on q and k (not v), rotate-half layout: x*cos + rotate_half(x)*sin with
      inv_freq = rope_theta ** (-arange(0, hd, 2) / hd) and the angles repeated as cat([f, f]).
      GQA: kv head j serves query heads j*g .. j*g+g-1 (g = n_heads // n_kv_heads).
      mlp(x) = down_proj(silu(gate_proj(x)) * up_proj(x)).
    """

    def __init__(self, d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError


def llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied):
    """Parameters of a LLaMA model: embeddings, n_layers blocks as above, the final RMSNorm, and the LM head
    (vocab x d_model) unless tied to the embeddings. Llama-2-7B (32000, 4096, 32, 32, 32, 11008, False)
    has 6,738,415,616."""
    raise NotImplementedError
