import torch.nn.functional as F


def split_kv_attention(q, k, v, n_splits):
    """Broken on purpose: torch's own attention does all the work."""
    return F.scaled_dot_product_attention(q, k, v)
