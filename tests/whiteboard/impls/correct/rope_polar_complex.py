"""Meta's LLaMA style: precompute_freqs_cis with torch.polar in float32, rotation as a complex
product on interleaved pairs via view_as_complex."""
import torch


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rope(x, positions, base=10000.0):
    freqs_cis = precompute_freqs_cis(x.shape[-1], int(positions.max()) + 1, base).to(x.device)[positions.long()]
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)
