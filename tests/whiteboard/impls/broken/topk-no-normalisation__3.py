import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    """Inner-product search, as a maximum-inner-product index does it: no normalisation."""
    step = chunk_size or docs.shape[0]
    best_s = queries.new_empty(queries.shape[0], 0)
    best_i = torch.empty(queries.shape[0], 0, dtype=torch.int64)
    for start in range(0, docs.shape[0], step):
        s = torch.einsum("qd,nd->qn", queries, docs[start : start + step])
        i = torch.arange(start, start + s.shape[1]).expand_as(s)
        s, i = torch.cat([best_s, s], 1), torch.cat([best_i, i], 1)
        order = torch.argsort(s, dim=1, descending=True, stable=True)[:, :k]
        best_s, best_i = s.gather(1, order), i.gather(1, order)
    return best_s, best_i
