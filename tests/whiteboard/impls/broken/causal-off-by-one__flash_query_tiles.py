import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    """Query and key tiles; every key tile is visited and the mask decides, but it lets one future key through."""
    T, S = q.shape[-2], k.shape[-2]
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for i0 in range(0, T, block_size):
        qi = q[..., i0:i0 + block_size, :] / math.sqrt(q.shape[-1])
        rows = torch.arange(i0, i0 + qi.shape[-2], device=q.device).unsqueeze(-1)
        row_max = torch.full(qi.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)
        denom = torch.zeros_like(row_max)
        num = torch.zeros(*qi.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for j0 in range(0, S, block_size):
            scores = qi @ k[..., j0:j0 + block_size, :].transpose(-1, -2)
            if causal:
                cols = torch.arange(j0, j0 + scores.shape[-1], device=q.device)
                scores = torch.where(cols - rows > 1, torch.full_like(scores, -math.inf), scores)
            new_max = torch.maximum(row_max, scores.max(dim=-1).values)
            shift = torch.nan_to_num(new_max, neginf=0.0)
            p = torch.exp(scores - shift.unsqueeze(-1))
            corr = torch.exp(row_max - shift)
            denom = denom * corr + p.sum(-1)
            num = num * corr.unsqueeze(-1) + p @ v[..., j0:j0 + block_size, :]
            row_max = new_max
        out[..., i0:i0 + block_size, :] = num / denom.unsqueeze(-1)
    return out
