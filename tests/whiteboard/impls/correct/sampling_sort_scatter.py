import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """Sort once, cut in sorted order, scatter back."""
    scaled = logits / temperature
    ordered, index = scaled.sort(dim=-1, descending=True)
    vocab = scaled.shape[-1]
    remove = torch.zeros_like(ordered, dtype=torch.bool)
    if 0 < top_k < vocab:
        remove[..., top_k:] = True
    ordered = ordered.masked_fill(remove, float("-inf"))
    if top_p < 1.0:
        probs = ordered.softmax(dim=-1)
        shifted = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(-1)[..., :-1]], dim=-1)
        remove = remove | (shifted >= top_p)
        remove[..., 0] = False
    out = torch.empty_like(scaled)
    return out.scatter_(-1, index, ordered.masked_fill(remove, float("-inf")))


def sample(logits, generator):
    """Inverse CDF: the first index whose cumulative probability exceeds a uniform draw."""
    probs = logits.softmax(dim=-1)
    cdf = probs.cumsum(dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=probs.dtype, device=probs.device)
    ids = (cdf <= u * cdf[..., -1:]).sum(dim=-1)
    return ids.clamp(max=probs.shape[-1] - 1)
