import torch


def dropout(x, p, training, generator=None):
    """The mask itself carries the scale: 1 / (1 - p) where kept, 0 where dropped (as cuDNN builds it)."""
    if not training or p == 0.0:
        return x.clone()
    u = torch.rand(x.shape, generator=generator, device=x.device, dtype=torch.float32)
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    mask = (u > p).to(x.dtype) * scale
    return x * mask
