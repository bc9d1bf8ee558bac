import math

import torch


def padded_attention(q, k, v, lengths):
    T = k.size(-2)
    valid = torch.arange(T, device=k.device)[None, :] < lengths.to(k.device)[:, None]  # [B, T]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
