import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, theta):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim, self.theta = n_heads, n_kv_heads, dim // n_heads, theta
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def rotate(self, t, positions):
        half = self.head_dim // 2
        freqs = self.theta ** (-torch.arange(half, dtype=torch.float64, device=t.device) * 2 / self.head_dim)
        angle = positions[:, None] * freqs[None, :]
        cos, sin = angle.cos().to(t.dtype), angle.sin().to(t.dtype)
        x1, x2 = t[..., :half], t[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        pos = torch.arange(seqlen, dtype=torch.float64, device=x.device)
        xq = self.rotate(self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2), pos)
        xk = self.rotate(self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2), pos)
        xv = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        out = []
        for head in range(self.n_heads):
            kv = head % self.n_kv_heads
            s = xq[:, head] @ xk[:, kv].transpose(-1, -2) / math.sqrt(self.head_dim)
            s = s.masked_fill(torch.ones(seqlen, seqlen, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            out.append(F.softmax(s, dim=-1) @ xv[:, kv])
        return self.wo(torch.cat(out, dim=-1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    """Meta's module names (attention.wq, feed_forward.w1, attention_norm, ffn_norm), rotate-half RoPE, a loop over heads."""

    def __init__(self, d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
        super().__init__()
        self.attention = Attention(d_model, n_heads, n_kv_heads, rope_theta)
        self.feed_forward = FeedForward(d_model, ffn_dim)
        self.attention_norm = RMSNorm(d_model, eps)
        self.ffn_norm = RMSNorm(d_model, eps)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


def llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied):
    kv_dim = n_kv_heads * (d_model // n_heads)
    layer = d_model * (2 * d_model + 2 * kv_dim) + 3 * d_model * ffn_dim + 2 * d_model
    embeddings = vocab * d_model * (1 if tied else 2)
    return embeddings + n_layers * layer + d_model
