import torch


def attention_backward(q, k, v, d_out, mask=None):
    """FlashAttention-2's backward, untiled: P from the saved log-sum-exp, D = rowsum(dO * O)."""
    scale = q.shape[-1] ** -0.5
    s = torch.einsum("...id,...jd->...ij", q, k) * scale
    if mask is not None:
        s = torch.where(mask, s, torch.tensor(float("-inf"), dtype=s.dtype, device=s.device))
    m = s.amax(dim=-1, keepdim=True)
    lse = m + torch.log(torch.exp(s - m).sum(dim=-1, keepdim=True))
    p = torch.exp(s - lse)
    out = torch.einsum("...ij,...je->...ie", p, v)
    D = (d_out * out).sum(dim=-1, keepdim=True)  # = rowsum(dP * P)
    dv = torch.einsum("...ij,...ie->...je", p, d_out)
    dp = torch.einsum("...ie,...je->...ij", d_out, v)
    ds = p * (dp - D)
    return torch.einsum("...ij,...jd->...id", ds, k) * scale, torch.einsum("...ij,...id->...jd", ds, q) * scale, dv
