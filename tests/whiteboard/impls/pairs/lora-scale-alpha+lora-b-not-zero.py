import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad = False
        if self.base.bias is not None:
            self.base.bias.requires_grad = False
        self.alpha = alpha
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)  # default init: B is not zero

    def forward(self, x):
        return self.base(x) + self.alpha * self.lora_B(self.lora_A(x))

    @torch.no_grad()
    def merged(self):
        out = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None)
        out = out.to(self.base.weight)
        out.weight.copy_(self.base.weight + self.alpha * self.lora_B.weight @ self.lora_A.weight)
        if self.base.bias is not None:
            out.bias.copy_(self.base.bias)
        return out
