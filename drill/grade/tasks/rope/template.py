import torch


def apply_rope(x, positions, base=10000.0):
    """Rotary position embedding, rotate-half convention (as in LLaMA).

    x: [..., T, d] with d even, any leading dimensions ([B, H, T, d] in LLaMA)   positions: int tensor [T]
    Pair dimension i with i + d/2 and rotate it by angle positions[t] * base ** (-2i / d).
    returns: a new tensor shaped like x (do not modify x).
    """
    raise NotImplementedError
