"""The Annotated Transformer's PositionalEncoding table (Harvard NLP), as written.

Source: https://github.com/harvardnlp/annotated-transformer/blob/debc9fd747bb2123160a98046ad1c2d4da44a567/the_annotated_transformer.py
Adapted: the table is built for max_len = T with the contract's base in place of the hard-coded 10000.0, and
returned as the [T, d_model] table (the module adds it to x and applies dropout; neither is asked here).
"""
import math

import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    max_len = T
    # Compute the positional encodings once in log space.
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(
        torch.arange(0, d_model, 2) * -(math.log(base) / d_model)
    )
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
