from collections import Counter


def _replace(ids, pair, new):
    out = []
    for t in ids:
        if out and out[-1] == pair[0] and t == pair[1]:
            out[-1] = new
        else:
            out.append(t)
    return out


def _replace_overlapping(ids, pair, new):
    out = list(ids)
    hits = [i for i in range(len(ids) - 1) if (ids[i], ids[i + 1]) == pair]
    for i in reversed(hits):
        out[i:i + 2] = [new]
    return out


def train_bpe(text, n_merges):
    ids = list(text.encode("utf-8"))
    merges = []
    for k in range(n_merges):
        stats = Counter(zip(ids, ids[1:]))
        if not stats:
            break
        pair = max(stats, key=stats.get)
        merges.append(pair)
        ids = _replace_overlapping(ids, pair, 256 + k)
    return merges


def encode(text, merges):
    rank = {tuple(p): i for i, p in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while True:
        cands = [p for p in zip(ids, ids[1:]) if p in rank]
        if not cands:
            return ids
        pair = min(cands, key=rank.get)
        ids = _replace(ids, pair, 256 + rank[pair])
