import copy

import torch
from torch import nn


class LoRALinear(nn.Module):
    """requires_grad_(False) on the whole base module, the low-rank path as einsums, merged() on a deepcopy."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.A = nn.Linear(base.in_features, r, bias=False)
        self.B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.B.weight)
        self.scale = alpha / r

    def forward(self, x):
        low = torch.einsum("...i,ri->...r", x, self.A.weight)
        return self.base(x) + self.scale * torch.einsum("...r,or->...o", low, self.B.weight)

    def merged(self) -> nn.Linear:
        layer = copy.deepcopy(self.base)
        with torch.no_grad():
            layer.weight += self.scale * torch.einsum("or,ri->oi", self.B.weight, self.A.weight)
        return layer
