import math
import torch

def slopes(n):
    if math.log2(n).is_integer():
        return [2 ** (-8 * (h + 1) / n) for h in range(n)]
    c = 2 ** math.floor(math.log2(n))
    return slopes(c) + slopes(2 * c)[0::2][: n - c]

def alibi_attention(q, k, v, causal=True):
    h, t, d = q.shape[-3:]
    m = torch.tensor(slopes(h), dtype=q.dtype, device=q.device)[:, None, None]
    pos = torch.arange(t, device=q.device)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) - m * (pos[:, None] - pos[None, :]).abs()
    return scores.softmax(-1) @ v  # causal ignored: no mask
