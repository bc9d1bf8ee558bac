"""Raises with a lone surrogate in its message: text that no UTF-8 terminal or JSON writer can encode."""


def scaled_dot_product_attention(q, k, v, mask=None):
    raise ValueError("bad \ud800 text")
