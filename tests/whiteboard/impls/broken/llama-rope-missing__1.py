import math

import torch
import torch.nn.functional as F
from torch import nn


class LlamaBlock(nn.Module):
    """Hugging Face's names on ModuleDicts, torch's own nn.RMSNorm, one forward."""

    def __init__(self, d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
        super().__init__()
        self.h, self.kv, self.hd = n_heads, n_kv_heads, d_model // n_heads
        hd = self.hd
        self.input_layernorm = nn.RMSNorm(d_model, eps=eps)
        self.post_attention_layernorm = nn.RMSNorm(d_model, eps=eps)
        self.self_attn = nn.ModuleDict({name: nn.Linear(i, o, bias=False) for name, i, o in (
            ("q_proj", d_model, n_heads * hd), ("k_proj", d_model, n_kv_heads * hd), ("v_proj", d_model, n_kv_heads * hd),
            ("o_proj", n_heads * hd, d_model))})  # fmt: skip
        self.mlp = nn.ModuleDict({"gate_proj": nn.Linear(d_model, ffn_dim, bias=False), "up_proj": nn.Linear(d_model, ffn_dim, bias=False),
                                  "down_proj": nn.Linear(ffn_dim, d_model, bias=False)})  # fmt: skip
        self.register_buffer("inv_freq", rope_theta ** (-torch.arange(0, hd, 2).double() / hd), persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        a = self.self_attn
        h = self.input_layernorm(x)
        q = a["q_proj"](h).unflatten(-1, (self.h, self.hd)).transpose(1, 2)
        k = a["k_proj"](h).unflatten(-1, (self.kv, self.hd)).transpose(1, 2)
        v = a["v_proj"](h).unflatten(-1, (self.kv, self.hd)).transpose(1, 2)
        angles = torch.outer(torch.arange(T, device=x.device, dtype=torch.float64), self.inv_freq.to(x.device))
        cos, sin = (f(angles).to(x.dtype).repeat(1, 2) for f in (torch.cos, torch.sin))
        half = self.hd // 2
        g = self.h // self.kv
        k = k[:, :, None].expand(B, self.kv, g, T, self.hd).reshape(B, self.h, T, self.hd)
        v = v[:, :, None].expand(B, self.kv, g, T, self.hd).reshape(B, self.h, T, self.hd)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.hd)
        scores = scores + torch.full((T, T), float("-inf"), device=x.device, dtype=x.dtype).triu(1)
        x = x + a["o_proj"]((scores.softmax(-1) @ v).transpose(1, 2).flatten(2))
        h = self.post_attention_layernorm(x)
        m = self.mlp
        return x + m["down_proj"](F.silu(m["gate_proj"](h)) * m["up_proj"](h))


def llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied):
    hd = d_model // n_heads
    shapes = [(d_model, n_heads * hd), (d_model, n_kv_heads * hd), (d_model, n_kv_heads * hd), (n_heads * hd, d_model),
              (d_model, ffn_dim), (d_model, ffn_dim), (ffn_dim, d_model), (d_model, 1), (d_model, 1)]  # fmt: skip
    per_layer = sum(a * b for a, b in shapes)
    matrices = 1 if tied else 2
    return n_layers * per_layer + matrices * vocab * d_model + d_model
