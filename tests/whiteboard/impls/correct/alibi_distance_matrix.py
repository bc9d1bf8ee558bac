import math

import torch


def get_slopes(n):
    """The ALiBi paper's code (ofirpress/attention_with_linear_biases)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


def alibi_attention(q, k, v, causal=True):
    B, H, T, D = q.shape
    slopes = torch.tensor(get_slopes(H), dtype=q.dtype, device=q.device)
    rel = torch.arange(T, device=q.device)[None, :] - torch.arange(T, device=q.device)[:, None]  # j - i
    bias = -slopes[:, None, None] * rel.abs().to(q.dtype)[None]
    scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(D) + bias
    if causal:
        scores = scores.masked_fill(rel > 0, float("-inf"))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    w = scores.exp()
    return torch.einsum("bhij,bhjd->bhid", w / w.sum(dim=-1, keepdim=True), v)
