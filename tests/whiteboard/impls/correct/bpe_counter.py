from collections import Counter


def _replace(seq, a, b, new):
    out = []
    i = 0
    n = len(seq)
    while i < n:
        if i < n - 1 and seq[i] == a and seq[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def train_bpe(text, n_merges):
    """collections.Counter; most_common keeps first-seen order on ties."""
    seq = list(text.encode("utf-8"))
    merges = []
    for k in range(n_merges):
        if len(seq) < 2:
            break
        (a, b), _ = Counter(zip(seq, seq[1:])).most_common(1)[0]
        merges.append((a, b))
        seq = _replace(seq, a, b, 256 + k)
    return merges


def encode(text, merges):
    """Merges in rank order: a token made by merge k can only take part in later merges."""
    seq = list(text.encode("utf-8"))
    for k, (a, b) in enumerate(merges):
        seq = _replace(seq, a, b, 256 + k)
    return seq
