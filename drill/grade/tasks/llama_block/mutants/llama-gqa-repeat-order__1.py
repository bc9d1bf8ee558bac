import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class Attention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, rope_theta):
        super().__init__()
        self.h, self.kv, self.hd, self.theta = n_heads, n_kv_heads, d_model // n_heads, rope_theta
        self.q_proj = nn.Linear(d_model, n_heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(n_heads * self.hd, d_model, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        inv_freq = 1.0 / self.theta ** (torch.arange(0, self.hd, 2, device=x.device, dtype=torch.float32) / self.hd)
        freqs = torch.arange(T, device=x.device, dtype=torch.float32)[:, None] * inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat(1, self.h // self.kv, 1, 1)  # BUG: tiles the kv heads: query head h gets kv head h % n_kv
        v = v.repeat(1, self.h // self.kv, 1, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return self.o_proj((weights @ v).transpose(1, 2).reshape(B, T, -1))


class MLP(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, ffn_dim, bias=False)
        self.up_proj = nn.Linear(d_model, ffn_dim, bias=False)
        self.down_proj = nn.Linear(ffn_dim, d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(d_model, eps)
        self.self_attn = Attention(d_model, n_heads, n_kv_heads, rope_theta)
        self.post_attention_layernorm = RMSNorm(d_model, eps)
        self.mlp = MLP(d_model, ffn_dim)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


def llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied):
    head_dim = d_model // n_heads
    attn = 2 * d_model * d_model + 2 * d_model * n_kv_heads * head_dim  # q, o; k, v
    layer = attn + 3 * d_model * ffn_dim + 2 * d_model  # gate, up, down; two RMSNorms
    return vocab * d_model + n_layers * layer + d_model + (0 if tied else vocab * d_model)
