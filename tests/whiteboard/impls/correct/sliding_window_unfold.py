import math

import torch
import torch.nn.functional as F


def sliding_window_attention(q, k, v, window):
    """Never builds T x T: pad keys on the left, gather each query's `window` keys with unfold."""
    t, d = q.shape[-2:]
    w = min(window, t)
    pad = lambda x: F.pad(x, (0, 0, w - 1, 0))  # w - 1 zero rows before position 0
    k_win = pad(k).unfold(-2, w, 1)  # [..., T, D, w]: keys t-w+1..t for query t
    v_win = pad(v).unfold(-2, w, 1)
    scores = torch.einsum("...td,...tdw->...tw", q, k_win) / math.sqrt(d)
    real = torch.arange(w, device=q.device)[None, :] + torch.arange(t, device=q.device)[:, None] >= w - 1
    scores = scores.masked_fill(~real, float("-inf"))  # the left padding of the first queries
    m = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores - m)
    return torch.einsum("...tw,...tdw->...td", e / e.sum(dim=-1, keepdim=True), v_win)
