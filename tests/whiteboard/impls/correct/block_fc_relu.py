import torch
import torch.nn.functional as F
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.q_proj, self.k_proj, self.v_proj = (nn.Linear(d_model, d_model) for _ in range(3))
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (p(x).reshape(B, T, self.h, -1).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        s = torch.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
        pos = torch.arange(T, device=x.device)
        s = s.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        y = torch.einsum("bhij,bhjd->bhid", s.softmax(-1), v)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, D))


class TransformerBlock(nn.Module):
    """Pre-LN block; the FFN's activation lives in forward."""

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = SelfAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        h = x + self.self_attn(self.norm1(x))
        return h + self.fc2(F.relu(self.fc1(self.norm2(h))))
