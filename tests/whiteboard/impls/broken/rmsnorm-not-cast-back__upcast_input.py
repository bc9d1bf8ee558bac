import torch


def rms_norm(x, weight, eps=1e-6):
    x = x.to(torch.float32)  # normalise in float32 for fp16/bf16 inputs
    rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps)
    return x / rms * weight
