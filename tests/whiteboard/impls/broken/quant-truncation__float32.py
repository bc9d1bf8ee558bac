import torch


def quantize_int8(w):
    wf = w.float()
    amax = wf.abs().amax(dim=1, keepdim=True)
    scale = amax / 127
    q = (wf * 127 / torch.where(amax == 0, torch.ones_like(amax), amax)).to(torch.int8)  # the cast truncates
    return q, scale.to(w.dtype)


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
