"""mistral-inference's RMSNorm (the same in Meta's llama and llama2.c), as written.

Source: https://github.com/mistralai/mistral-inference/blob/2557e12d0e1878a1562ece30434820f80aa3e12a/src/mistral_inference/transformer_layers.py
Adapted: the contract's function builds the module and sets its weight and epsilon.
"""
import torch
from torch import nn


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def rms_norm(x, weight, eps=1e-6):
    norm = RMSNorm(x.shape[-1], eps)
    del norm.weight
    norm.weight = weight  # the caller's tensor, so its gradient reaches it
    return norm(x)
