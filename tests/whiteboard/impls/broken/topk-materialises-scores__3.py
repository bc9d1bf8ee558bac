import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    """Chunked scoring, but the chunks are joined back into the whole [Q, N] matrix before ranking."""
    q = queries / queries.norm(dim=-1, keepdim=True)
    d = docs / docs.norm(dim=-1, keepdim=True)
    step = chunk_size or d.shape[0]
    scores = torch.cat([q @ d[s : s + step].T for s in range(0, d.shape[0], step)], dim=1)
    scores, order = torch.sort(scores, dim=1, descending=True, stable=True)
    return scores[:, :k], order[:, :k]
