import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    """argsort of the negated scores (stable), the running best k merged chunk by chunk."""
    q = queries * queries.pow(2).sum(-1, keepdim=True).rsqrt()
    d = docs * docs.pow(2).sum(-1, keepdim=True).rsqrt()
    n = d.shape[0]
    step = n if chunk_size is None else chunk_size
    keep_s, keep_i = None, None
    for start in range(0, n, step):
        s = torch.mm(q, d[start : start + step].t())
        i = torch.arange(start, start + s.shape[1]).repeat(q.shape[0], 1)
        if keep_s is not None:
            s, i = torch.cat((keep_s, s), 1), torch.cat((keep_i, i), 1)
        order = torch.argsort(-s, dim=1, stable=True)[:, :k]
        keep_s, keep_i = s.gather(1, order), i.gather(1, order)
    return keep_s, keep_i
