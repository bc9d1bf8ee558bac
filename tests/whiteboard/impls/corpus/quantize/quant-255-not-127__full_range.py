import torch


def quantize_int8(w):
    wf = w.float()
    amax = wf.abs().amax(dim=1, keepdim=True)
    scale = amax / 255.0
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    q = torch.round(wf / safe).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
