def _merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 1
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text, n_merges):
    ids = [ord(c) for c in text]
    merges = []
    for k in range(n_merges):
        counts = {}
        for a, b in zip(ids, ids[1:]):
            counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        pair = max(counts, key=counts.get)
        ids = _merge(ids, pair, 256 + k)
        merges.append(pair)
    return merges


def encode(text, merges):
    ranks = {tuple(pair): k for k, pair in enumerate(merges)}
    ids = [ord(c) for c in text]
    while len(ids) >= 2:
        pairs = set(zip(ids, ids[1:]))
        pair = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = _merge(ids, pair, 256 + ranks[pair])
    return ids
