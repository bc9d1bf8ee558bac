"""Parameters with gradients for the user's code (``clip_grad_norm(parameters, max_norm)``), built on
the user side from the ``$params`` recipe of drill.grade.user.wire; and the layer of its ``$linear`` recipe.

Each parameter's ``.grad`` is the gradient tensor the judge sent, so whatever the user's code does to
it comes back to the judge as a modified input: scaled in place (``p.grad.mul_(c)``, as torch's
``clip_grad_norm_`` does), or replaced (``p.grad = p.grad * c``), which is copied into it.
"""

from __future__ import annotations

import torch
from torch import nn


class GradParameter(nn.Parameter):
    """An nn.Parameter whose ``.grad`` stays the tensor it was given: a new one assigned is copied in."""

    @property
    def grad(self):
        return torch.Tensor.grad.__get__(self)

    @grad.setter
    def grad(self, value):
        sent = self.__dict__.get("sent_grad")
        if sent is not None and isinstance(value, torch.Tensor) and value is not sent and value.shape == sent.shape:
            with torch.no_grad():
                sent.copy_(value.detach())
            value = sent
        torch.Tensor.grad.__set__(self, value)


def grad_parameters(pairs) -> list[GradParameter]:
    """[(value, grad or None), ...] -> parameters with those gradients."""
    params = []
    for value, grad in pairs:
        p = GradParameter(value)
        p.__dict__["sent_grad"] = grad
        torch.Tensor.grad.__set__(p, grad)
        params.append(p)
    return params


def linear_layer(weight, bias) -> nn.Linear:
    """An nn.Linear holding ``weight`` [out, in] and ``bias`` (or none), on their device and dtype."""
    layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        layer.weight.copy_(weight)
        if bias is not None:
            layer.bias.copy_(bias)
    return layer
