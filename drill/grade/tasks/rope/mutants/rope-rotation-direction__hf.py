import torch


class RotaryTables:
    def __init__(self, dim, base=10000.0, max_position=64):
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        t = torch.arange(max_position, dtype=torch.int64).float()
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos_cached, self.sin_cached = emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    tables = RotaryTables(x.shape[-1], base, max_position=int(positions.max()) + 1)
    cos = tables.cos_cached.to(x.device)[positions.long()].to(x.dtype)
    sin = tables.sin_cached.to(x.device)[positions.long()].to(x.dtype)
    return (x * cos) - (rotate_half(x) * sin)  # BUG: rotated by -angle
