import torch


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose: chunks of Tk // n_splits keys, the remainder never read."""
    chunk = max(k.shape[-2] // n_splits, 1)
    scale = q.shape[-1] ** -0.5
    acc = l = m = None
    for c in range(min(n_splits, k.shape[-2])):
        s = q @ k[..., c * chunk:(c + 1) * chunk, :].transpose(-2, -1) * scale
        mc = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - mc)
        lc, ac = p.sum(dim=-1, keepdim=True), p @ v[..., c * chunk:(c + 1) * chunk, :]
        if m is None:
            m, l, acc = mc, lc, ac
        else:
            new = torch.maximum(m, mc)
            a, b = torch.exp(m - new), torch.exp(mc - new)
            m, l, acc = new, a * l + b * lc, a * acc + b * ac
    return acc / l
