import torch
import torch.nn.functional as F


def _topk_stable(scores, idx, k):
    order = torch.topk(scores, k, dim=-1).indices
    return scores.gather(-1, order), idx.gather(-1, order)


def topk_cosine(queries, docs, k, chunk_size=None):
    qn = F.normalize(queries, dim=-1)
    dn = F.normalize(docs, dim=-1)
    N = docs.shape[0]
    step = N if chunk_size is None else chunk_size
    best_s = qn.new_empty(queries.shape[0], 0)
    best_i = torch.empty(queries.shape[0], 0, dtype=torch.long, device=queries.device)
    for start in range(0, N, step):
        s = qn @ dn[start:start + step].T
        i = torch.arange(start, start + s.shape[1], device=queries.device).expand(s.shape[0], -1)
        best_s, best_i = _topk_stable(torch.cat([best_s, s], 1), torch.cat([best_i, i], 1), k)
    return best_s, best_i
