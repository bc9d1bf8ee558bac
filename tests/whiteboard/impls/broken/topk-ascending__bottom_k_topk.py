import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    q = queries / queries.norm(dim=1, keepdim=True)
    size = chunk_size or docs.shape[0]
    vals = q.new_zeros(q.shape[0], 0)
    ids = torch.zeros(q.shape[0], 0, dtype=torch.long, device=q.device)
    for lo in range(0, docs.shape[0], size):
        d = docs[lo : lo + size]
        sims = q @ (d / d.norm(dim=1, keepdim=True)).T
        vals = torch.cat([vals, sims], 1)
        ids = torch.cat([ids, torch.arange(lo, lo + d.shape[0], device=q.device).expand(q.shape[0], -1)], 1)
        order = vals.argsort(dim=1, stable=True)[:, :k]  # sorted, but smallest first
        vals, ids = vals.gather(1, order), ids.gather(1, order)
    return vals, ids
