from collections import Counter


def merge(ids, pair, idx):
    if not ids:
        return []
    out = [ids[0]]
    for i in range(1, len(ids)):
        if (ids[i - 1], ids[i]) == pair:
            out[-1] = idx  # merge with the previous token
        else:
            out.append(ids[i])
    return out


def train_bpe(text, n_merges):
    ids = list(text.encode("utf-8"))
    merges = []
    for k in range(n_merges):
        stats = Counter(zip(ids, ids[1:]))
        if not stats:
            break
        pair = stats.most_common(1)[0][0]
        merges.append(pair)
        ids = merge(ids, pair, 256 + k)
    return merges


def encode(text, merges):
    ranks = {tuple(p): i for i, p in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while len(ids) > 1:
        pairs = set(zip(ids, ids[1:]))
        pair = min(pairs, key=lambda p: ranks.get(p, 1 << 60))
        if pair not in ranks:
            break
        ids = merge(ids, pair, 256 + ranks[pair])
    return ids
