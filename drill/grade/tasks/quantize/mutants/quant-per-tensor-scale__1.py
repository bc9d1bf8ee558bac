import torch


def dequantize(q, scale):
    return q.to(scale.dtype) * scale.reshape(-1, 1) if scale.dim() else q.to(scale.dtype) * scale


def quantize_int8(w):
    scale = w.abs().max() / 127  # one scale for the whole matrix
    q = torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8)
    return q, scale.expand(w.shape[0], 1)
