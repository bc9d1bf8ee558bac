import torch
import torch.nn.functional as F


def topk_cosine(queries, docs, k, chunk_size=None):
    """Each chunk's torch.topk, the lists joined in chunk order and cut at k."""
    q, d = F.normalize(queries, dim=-1), F.normalize(docs, dim=-1)
    step = chunk_size or len(d)
    tops = [torch.topk(q @ d[s : s + step].T, min(k, len(d[s : s + step])), dim=1) for s in range(0, len(d), step)]
    scores = torch.cat([t.values for t in tops], 1)[:, :k]
    ids = torch.cat([t.indices + n * step for n, t in enumerate(tops)], 1)[:, :k]
    return scores, ids
