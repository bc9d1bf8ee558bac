import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    """w1 and w3 applied as one matmul on their stacked weights, then split."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        gate, up = F.linear(x, torch.cat([self.w1.weight, self.w3.weight])).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)
