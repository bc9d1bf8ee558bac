import math

import torch


def sliding_window_attention(q, k, v, window):
    T, D = q.shape[-2], q.shape[-1]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = torch.tril(ones)
    w = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(D)
    w = torch.where(band, w, torch.tensor(float("-inf"), dtype=w.dtype, device=w.device))
    return torch.einsum("...ij,...jd->...id", w.softmax(-1), v)
