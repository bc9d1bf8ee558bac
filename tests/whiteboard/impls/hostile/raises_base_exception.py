"""Raises KeyboardInterrupt, a BaseException that no ``except Exception`` catches."""


def scaled_dot_product_attention(q, k, v, mask=None):
    raise KeyboardInterrupt("not from the keyboard")
