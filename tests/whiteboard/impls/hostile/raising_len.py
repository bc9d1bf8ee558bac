"""Returns a tuple whose __len__ and __iter__ raise."""


class Poisoned(tuple):
    def __len__(self):
        raise RuntimeError("len refused by the user's tuple")

    def __iter__(self):
        raise RuntimeError("iteration refused by the user's tuple")


def scaled_dot_product_attention(q, k, v, mask=None):
    return Poisoned((q,))
