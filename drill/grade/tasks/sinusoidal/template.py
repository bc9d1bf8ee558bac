import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    """The sinusoidal position encoding of "Attention Is All You Need", interleaved.

    T: number of positions (0..T-1)   d_model: even   base: the wavelength scale
    PE[t, 2i] = sin(t / base ** (2i / d_model)),  PE[t, 2i + 1] = cos(t / base ** (2i / d_model))
    returns: a float32 tensor [T, d_model]
    """
    raise NotImplementedError
