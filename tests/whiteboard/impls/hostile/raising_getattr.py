"""Returns an object whose every attribute lookup raises (not AttributeError), __class__ included."""


class Hostile:
    def __getattribute__(self, name):
        raise RuntimeError(f"no attribute {name} for you")


def scaled_dot_product_attention(q, k, v, mask=None):
    return Hostile()
