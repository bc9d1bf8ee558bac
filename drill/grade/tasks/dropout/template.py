import torch


def dropout(x, p, training, generator=None):
    """Inverted dropout, written by hand (as F.dropout, plus a generator).

    x: any shape, float   p: the probability of DROPPING an element, 0 <= p <= 1   training: bool
    generator: a torch.Generator to draw the mask from (None: torch's global generator)
    returns: x's shape, dtype and device.
      training: each element independently zeroed with probability p, the kept ones scaled by 1 / (1 - p),
                so the expectation is x; p = 0 gives x, p = 1 gives zeros (never NaN)
      not training: x unchanged
    Rules: no F.dropout / nn.Dropout, do not modify x.
    """
    raise NotImplementedError
