def train_bpe(text, n_merges):
    """Byte-level BPE training, no pre-tokenisation (as minbpe).

    Start from list(text.encode("utf-8")). n_merges times: count every adjacent pair (overlapping
    ones included), take the most frequent pair (a tie may go to the pair that occurs first, or to
    the smallest pair of ids), and replace it left to right without overlap by the new id 256 + k
    (k = 0, 1, ...): "aaa" becomes [aa, a].
    returns: merges, a list of (a, b) pairs of token ids in merge order (merge k makes id 256 + k)
    """
    raise NotImplementedError


def encode(text, merges):
    """Token ids of text under merges (a list of (a, b) pairs, merge k = id 256 + k).

    Start from the UTF-8 bytes; while some adjacent pair has a merge, apply the one with the
    lowest rank (learned first) to all its occurrences, left to right without overlap.
    returns: a list of int token ids
    """
    raise NotImplementedError
