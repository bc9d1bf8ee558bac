"""A Tensor subclass whose __torch_function__ raises; the file turns drill's own input into one
(``q.__class__ = Trap``) and returns one, so whatever drill's user side does with either runs it."""
import torch


class Trap(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError("the tensor refuses to be read")


def scaled_dot_product_attention(q, k, v, mask=None):
    out = (q @ k.transpose(-2, -1)).softmax(-1) @ v
    q.__class__ = Trap
    return out.as_subclass(Trap)
