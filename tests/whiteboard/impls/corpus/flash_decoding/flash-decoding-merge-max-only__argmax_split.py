import math

import torch


def split_kv_attention(q, k, v, n_splits):
    Tk, D = k.shape[-2], k.shape[-1]
    chunk = -(-Tk // n_splits)
    partial, lse = [], []
    for c in range(n_splits):
        ks, vs = k[..., c * chunk:(c + 1) * chunk, :], v[..., c * chunk:(c + 1) * chunk, :]
        if ks.shape[-2] == 0:
            continue
        s = torch.einsum("...qd,...kd->...qk", q, ks) / math.sqrt(D)
        partial.append(torch.einsum("...qk,...kd->...qd", s.softmax(-1), vs))
        lse.append(s.logsumexp(-1))
    L = torch.stack(lse, -1)
    O = torch.stack(partial, -2)
    best = L.argmax(-1, keepdim=True)
    return torch.gather(O, -2, best.unsqueeze(-1).expand(*best.shape, O.shape[-1])).squeeze(-2)
