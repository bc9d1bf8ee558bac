import torch
from torch import nn


class MultiHeadLatentAttention(nn.Module):
    """The inference form: W_uk absorbed into the queries and W_uv applied after the weighted sum of latents,
    so attention runs against the cached latents and full K and V are never built."""

    def __init__(self, d_model, n_heads, d_latent):
        super().__init__()
        self.h, self.hd = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_dkv = nn.Linear(d_model, d_latent, bias=False)
        self.W_uk = nn.Linear(d_latent, d_model, bias=False)
        self.W_uv = nn.Linear(d_latent, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, cache=None):
        B, n, D = x.shape
        c = self.W_dkv(x) if cache is None else torch.cat([cache, self.W_dkv(x)], dim=1)  # [B, S, d_latent]
        S = c.shape[1]
        q = self.W_q(x).reshape(B, n, self.h, self.hd)
        w_k = self.W_uk.weight.reshape(self.h, self.hd, -1)  # k_h = w_k[h] @ c
        w_v = self.W_uv.weight.reshape(self.h, self.hd, -1)
        q_latent = torch.einsum("bnhd,hdc->bhnc", q, w_k)
        scores = torch.einsum("bhnc,bsc->bhns", q_latent, c) * self.hd**-0.5
        q_pos = torch.arange(S - n, S, device=x.device)[:, None]
        scores = scores.masked_fill(torch.arange(S, device=x.device)[None, :] > q_pos, float("-inf"))
        mixed = torch.einsum("bhns,bsc->bhnc", scores.softmax(dim=-1), c)
        out = torch.einsum("bhnc,hdc->bnhd", mixed, w_v).reshape(B, n, D)
        return self.W_o(out), c
