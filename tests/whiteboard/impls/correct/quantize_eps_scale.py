import torch


def quantize_int8(w):
    scale = (w.abs().amax(dim=1) / 127.0).clamp_min(torch.finfo(torch.float32).eps)
    q = (w / scale[:, None]).round().clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale.unsqueeze(-1)
