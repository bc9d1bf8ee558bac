import torch
from torch import nn


class LoRALinear(nn.Module):
    """A LoRA adapter around a pretrained nn.Linear (Hu et al. 2021).

    __init__(base: nn.Linear, r: int, alpha: float):
        keep base and freeze its parameters (weight and bias);
        A = nn.Linear(base.in_features, r, bias=False), randomly initialised;
        B = nn.Linear(r, base.out_features, bias=False), zero-initialised (so the layer starts as base);
        (names A/B or lora_A/lora_B)
    forward(x): x [..., in] -> [..., out] = base(x) + (alpha / r) * B(A(x))
    merged() -> a new nn.Linear(in, out) with weight W + (alpha / r) * B.weight @ A.weight and base's bias
        (or none if base has none); base itself unchanged.
    """

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError

    def merged(self) -> nn.Linear:
        raise NotImplementedError
