import torch


def quantize_int8(w):
    amax = w.abs().amax(dim=1, keepdim=True)
    scale = amax / 127
    inv = 127 / amax.clamp(min=1e-30)
    q = torch.trunc(w * inv).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
