"""Returns a list whose __iter__ raises: the user side's serialisation walks it."""


class Poisoned(list):
    def __iter__(self):
        raise RuntimeError("iteration refused by the user's list")


def scaled_dot_product_attention(q, k, v, mask=None):
    return Poisoned([q])
