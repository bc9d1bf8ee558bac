def _merge(ids, pair, new):
    out = ids[:1]
    for i in range(1, len(ids)):
        if ids[i - 1] == pair[0] and ids[i] == pair[1]:
            out[-1] = new  # merged with the previous token, even when that one was already merged
        else:
            out.append(ids[i])
    return out


def _counts(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def train_bpe(text, n_merges):
    ids, merges = list(text.encode("utf-8")), []
    for k in range(n_merges):
        counts = _counts(ids)
        if not counts:
            break
        best = max(counts, key=counts.get)  # ties: the pair seen first
        merges.append(best)
        ids = _merge(ids, best, 256 + k)
    return merges


def encode(text, merges):
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(_counts(ids), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = _merge(ids, pair, 256 + ranks[pair])
    return ids
