import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    """The new chunk put before the kept ones: a stable sort then prefers the higher indices on ties."""
    q = queries / queries.norm(dim=-1, keepdim=True)
    d = docs / docs.norm(dim=-1, keepdim=True)
    step = chunk_size or d.shape[0]
    best_s = q.new_empty(q.shape[0], 0)
    best_i = torch.empty(q.shape[0], 0, dtype=torch.int64)
    for start in range(0, d.shape[0], step):
        s = q @ d[start : start + step].T
        i = torch.arange(start, start + s.shape[1]).expand_as(s)
        s, i = torch.cat([s, best_s], 1), torch.cat([i, best_i], 1)
        s, order = torch.sort(s, dim=1, descending=True, stable=True)
        best_s, best_i = s[:, :k], i.gather(1, order[:, :k])
    return best_s, best_i
