"""Raises an exception whose __str__ and __repr__ raise: formatting the user's failure runs user code."""


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text for you")

    __repr__ = __str__


def scaled_dot_product_attention(q, k, v, mask=None):
    raise Unprintable()
