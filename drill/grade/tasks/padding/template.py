import torch


def make_attention_mask(lengths, T, causal=False):
    """The boolean attention mask of a batch of right-padded sequences.

    lengths: int tensor [B], 1 <= lengths[b] <= T   T: the padded length
    returns: bool [B, 1, T, T], True = may attend: key j is allowed when j < lengths[b]
    (padding hides keys, i.e. columns; padded query rows still see the real keys).
    causal=True: also AND with the lower triangle (query i sees keys 0..i).
    """
    raise NotImplementedError
