import math

import torch


def attention_backward(q, k, v, d_out, mask=None):
    """The backward pass of out = softmax(q k^T / sqrt(D), masked) v, by hand.

    q: [..., Tq, D]   k: [..., Tk, D]   v: [..., Tk, Dv]   d_out: [..., Tq, Dv] (the gradient of the loss
    with respect to out); mask: optional bool, broadcastable to [..., Tq, Tk], True = may attend.
    returns: (dq [..., Tq, D], dk [..., Tk, D], dv [..., Tk, Dv]).
    Rules: no autograd (Tensor.backward, torch.autograd.grad, torch.func: refused at run time),
    no F.scaled_dot_product_attention, do not modify the inputs.
    """
    raise NotImplementedError
