import torch


def _merge(ids, pair, new):
    """Vectorised left-to-right merge: a match right after a taken match is skipped."""
    if ids.numel() < 2:
        return ids
    hit = (ids[:-1] == pair[0]) & (ids[1:] == pair[1])
    taken = torch.zeros_like(hit)
    prev = False
    for i, h in enumerate(hit.tolist()):
        prev = h and not prev
        taken[i] = prev
    keep = torch.ones_like(ids, dtype=torch.bool)
    keep[1:][taken] = False
    out = ids.clone()
    out[:-1][taken] = new
    return out[keep]


def train_bpe(text, n_merges):
    """Pair counts with torch.unique (sorted, so a tie goes to the smallest pair)."""
    ids = torch.tensor(list(text.encode("utf-8")), dtype=torch.long)
    merges = []
    for k in range(n_merges):
        if ids.numel() < 2:
            break
        pairs, counts = torch.unique(torch.stack([ids[:-1], ids[1:]], 1), dim=0, return_counts=True)
        a, b = pairs[int(torch.argmax(counts))].tolist()  # argmax returns the first maximum
        merges.append((a, b))
        ids = _merge(ids, (a, b), 256 + k)
    return merges


def encode(text, merges):
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = torch.tensor(list(text.encode("utf-8")), dtype=torch.long)
    while ids.numel() >= 2:
        found = [ranks[p] for p in zip(ids[:-1].tolist(), ids[1:].tolist()) if p in ranks]
        if not found:
            break
        k = min(found)
        ids = _merge(ids, merges[k], 256 + k)
    return ids.tolist()
