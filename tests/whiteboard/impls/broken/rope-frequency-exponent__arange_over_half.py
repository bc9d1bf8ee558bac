import torch


def apply_rope(x, positions, base=10000.0):
    """Interleaved pairs; the even exponents are divided by D/2 instead of D, so the frequencies fall twice as fast."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, device=x.device).to(x.dtype) / (d // 2))
    freqs = torch.outer(positions.to(x.dtype), inv_freq)
    cos, sin = freqs.cos(), freqs.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
