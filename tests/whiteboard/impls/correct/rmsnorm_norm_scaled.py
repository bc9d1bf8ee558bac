import math

import torch


def rms_norm(x, weight, eps=1e-6):
    """Through the L2 norm: rms = ||x|| / sqrt(D); computed in float32 (float64 stays float64)."""
    h = x.to(torch.promote_types(x.dtype, torch.float32))
    rms = torch.sqrt(torch.linalg.vector_norm(h, dim=-1, keepdim=True) ** 2 / x.shape[-1] + eps)
    return (h / rms).to(x.dtype) * weight
