import torch
from torch import nn


class LoRALinear(nn.Module):
    """loralib's parameters, but the low-rank path scaled by alpha itself, in forward and in merged()."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.pretrained = base
        self.pretrained.weight.requires_grad = False
        if base.bias is not None:
            base.bias.requires_grad = False
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / r)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.alpha = alpha

    def forward(self, x):
        delta = torch.einsum("...i,ri,or->...o", x, self.lora_A, self.lora_B)
        return self.pretrained(x) + self.alpha * delta

    def merged(self):
        out = nn.Linear(self.pretrained.in_features, self.pretrained.out_features, bias=self.pretrained.bias is not None)
        out = out.to(self.pretrained.weight)
        out.weight.data = self.pretrained.weight.data + self.alpha * self.lora_B.data @ self.lora_A.data
        if self.pretrained.bias is not None:
            out.bias.data = self.pretrained.bias.data.clone()
        return out
