import torch
from torch import nn


class LoRALinear(nn.Module):
    """peft's naming (base_layer, lora_A, lora_B), the base frozen through requires_grad = False, merge via F.linear math."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base_layer = base
        self.base_layer.weight.requires_grad = False
        if self.base_layer.bias is not None:
            self.base_layer.bias.requires_grad = False
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_A.weight, std=1 / r)
        nn.init.zeros_(self.lora_B.weight)
        self.r, self.alpha = r, alpha

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * (self.alpha / self.r)

    def merged(self) -> nn.Linear:
        base = self.base_layer
        out = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None).to(base.weight)
        out.weight.data = base.weight.data + (self.alpha / self.r) * (self.lora_B.weight.data @ self.lora_A.weight.data)
        if base.bias is not None:
            out.bias.data = base.bias.data.clone()
        return out
