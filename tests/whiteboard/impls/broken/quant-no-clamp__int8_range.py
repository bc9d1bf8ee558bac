import torch


def quantize_int8(w):
    absmax = w.abs().max(dim=-1, keepdim=True).values
    scale = absmax / 127.0
    scale = torch.where(absmax == 0, torch.ones_like(scale), scale)
    q = torch.round(w / scale).clamp(-128, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
