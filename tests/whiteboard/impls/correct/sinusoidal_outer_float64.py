import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    """Angles in float64 with torch.outer, interleaved by stack + flatten, cast at the end."""
    inv_freq = 1.0 / base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    return torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1).reshape(T, d_model).to(torch.float32)
