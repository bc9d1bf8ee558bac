import torch


def quantize_int8(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 255
    q = torch.clamp(torch.round(w / scale.clamp(min=1e-12)), -128, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
