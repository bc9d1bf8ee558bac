import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    """einsum names the axes; the mask picks with torch.where, and the scale goes on q before the matmul."""
    scores = torch.einsum("...qd,...kd->...qk", q * q.shape[-1] ** -0.5, k)
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
    return torch.einsum("...qk,...kd->...qd", scores.softmax(dim=-1), v)
