import torch


def topk_cosine(queries, docs, k, chunk_size=None):
    """Dense retrieval: the k documents most cosine-similar to each query, best first.

    queries: [Q, D], docs: [N, D], no zero rows; 1 <= k <= N
    cosine(q, d) = q·d / (|q| |d|): normalise both sides over the feature dim D, then one matmul (no loop over queries)
    chunk_size: None, or score the documents chunk_size at a time, keeping a running top-k per query, so that no
        [Q, N] score matrix is ever built: no tensor larger than Q x chunk_size (plus the k kept ones) may appear
    ties: equal scores are ordered by document index, lower first (torch.topk does not promise that)
    returns: (scores [Q, k] in the queries' dtype, descending; indices [Q, k] int64 into docs)
    """
    raise NotImplementedError
