def _pairs(ids):
    counts = {}
    for a, b in zip(ids, ids[1:]):
        counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def _merge(ids, pair, new):
    out = []
    for i, t in enumerate(ids):
        if i + 1 < len(ids) and (t, ids[i + 1]) == pair:
            out.append(new)
        elif i > 0 and (ids[i - 1], t) == pair:
            continue  # second half of a merged pair
        else:
            out.append(t)
    return out


def train_bpe(text, n_merges):
    ids = list(text.encode("utf-8"))
    merges = []
    for k in range(n_merges):
        counts = _pairs(ids)
        if not counts:
            break
        best = max(counts, key=counts.get)
        merges.append(best)
        ids = _merge(ids, best, 256 + k)
    return merges


def encode(text, merges):
    rank = {tuple(m): r for r, m in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while True:
        cands = [p for p in _pairs(ids) if p in rank]
        if not cands:
            return ids
        p = min(cands, key=rank.__getitem__)
        ids = _merge(ids, p, 256 + rank[p])
