import torch


def quantize_int8(w):
    scale = w.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8) / 127
    q = torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
