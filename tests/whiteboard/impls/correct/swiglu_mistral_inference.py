"""mistral-inference's FeedForward, as written.

Source: https://github.com/mistralai/mistral-inference/blob/2557e12d0e1878a1562ece30434820f80aa3e12a/src/mistral_inference/transformer_layers.py
Adapted: maybe_lora(None) is nn.Linear there (no LoRA), so the layers are nn.Linear here; the contract's
SwiGLU(d_model, d_ff) passes dim=d_model, hidden_dim=d_ff.
"""
import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()

        MaybeLora = nn.Linear
        self.w1 = MaybeLora(dim, hidden_dim, bias=False)
        self.w2 = MaybeLora(hidden_dim, dim, bias=False)
        self.w3 = MaybeLora(dim, hidden_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))  # type: ignore


class SwiGLU(FeedForward):
    def __init__(self, d_model, d_ff):
        super().__init__(dim=d_model, hidden_dim=d_ff)
