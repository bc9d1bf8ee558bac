import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.A = nn.Linear(base.in_features, r, bias=False)
        self.B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.A.weight, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.B.weight, a=math.sqrt(5))  # B random too: the layer no longer starts as base
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + self.scaling * self.B(self.A(x))

    @torch.no_grad()
    def merged(self) -> nn.Linear:
        layer = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None,
                          device=self.base.weight.device, dtype=self.base.weight.dtype)
        layer.weight.copy_(self.base.weight + self.scaling * self.B.weight @ self.A.weight)
        if self.base.bias is not None:
            layer.bias.copy_(self.base.bias)
        return layer
