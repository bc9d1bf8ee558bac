import torch
import torch.nn.functional as F


def topk_cosine(queries, docs, k, chunk_size=None):
    """F.normalize, each chunk's own top-k kept as candidates, one stable sort over all candidates at the end."""
    q, d = F.normalize(queries, dim=-1), F.normalize(docs, dim=-1)
    step = chunk_size or len(d)
    cand_scores, cand_ids = [], []
    for start in range(0, len(d), step):
        block = torch.einsum("qd,nd->qn", q, d[start : start + step])
        top, order = block.sort(dim=1, descending=True, stable=True)
        cand_scores.append(top[:, :k])
        cand_ids.append(order[:, :k] + start)
    scores, ids = torch.cat(cand_scores, 1), torch.cat(cand_ids, 1)  # chunk order: lower indices first
    scores, order = scores.sort(dim=1, descending=True, stable=True)
    return scores[:, :k], ids.gather(1, order[:, :k])
