import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    q = queries / queries.norm(dim=1, keepdim=True)
    d = docs / docs.norm(dim=1, keepdim=True)
    size = docs.shape[0] if chunk_size is None else chunk_size
    all_s, all_i = [], []
    for start in range(0, docs.shape[0], size):
        s = q @ d[start:start + size].T
        order = torch.argsort(s, dim=1, descending=True, stable=True)[:, :k]
        all_s.append(s.gather(1, order))
        all_i.append(order + start)
    return torch.cat(all_s, 1)[:, :k], torch.cat(all_i, 1)[:, :k]
