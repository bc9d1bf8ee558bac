import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    """timm's ViT Attention layout (one fused qkv, an output named proj), with a causal mask."""

    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.num_heads = n_heads
        self.scale = (d_model // n_heads) ** -0.5
        self.qkv = nn.Linear(d_model, d_model * 3)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer("causal", torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril())

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.masked_fill(~self.causal[:N, :N], float("-inf"))
        x = F.softmax(attn, dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(B, N, C))
