import torch


def split_kv_attention(q, k, v, n_splits):
    """Each chunk's softmax output with its running max; the merge keeps the chunk whose max is highest."""
    Tk = k.shape[-2]
    size = (Tk + n_splits - 1) // n_splits
    result, best_m = None, None
    for start in range(0, Tk, size):
        s = (q @ k[..., start:start + size, :].mT) * q.shape[-1] ** -0.5
        m = s.max(dim=-1, keepdim=True).values
        p = (s - m).exp()
        o = (p @ v[..., start:start + size, :]) / p.sum(dim=-1, keepdim=True)
        if result is None:
            result, best_m = o, m
        else:
            take = m > best_m
            result = torch.where(take, o, result)
            best_m = torch.maximum(best_m, m)
    return result
