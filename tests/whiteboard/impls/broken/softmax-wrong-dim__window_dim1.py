import math

import torch


def sliding_window_attention(q, k, v, window):
    T = q.shape[-2]
    pos = torch.arange(T)
    band = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < window)
    w = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    w = w.masked_fill(~band, -1e9)
    w = torch.softmax(w, dim=1)
    return w @ v
