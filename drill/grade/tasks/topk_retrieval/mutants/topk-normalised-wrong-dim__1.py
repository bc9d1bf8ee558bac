import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    q = queries / queries.norm(dim=0, keepdim=True)
    d = docs / docs.norm(dim=0, keepdim=True)
    step = chunk_size or d.shape[0]
    best_scores = q.new_empty(q.shape[0], 0)
    best_ids = torch.empty(q.shape[0], 0, dtype=torch.int64, device=q.device)
    for start in range(0, d.shape[0], step):
        scores = q @ d[start : start + step].T
        ids = torch.arange(start, start + scores.shape[1], device=q.device).expand_as(scores)
        scores = torch.cat([best_scores, scores], dim=1)  # the kept ones first: lower indices win ties
        ids = torch.cat([best_ids, ids], dim=1)
        scores, order = torch.sort(scores, dim=1, descending=True, stable=True)
        best_scores, best_ids = scores[:, :k], ids.gather(1, order[:, :k])
    return best_scores, best_ids
