"""llama2.c's FeedForward, as written.

Source: https://github.com/karpathy/llama2.c/blob/350e04fe35433e6d2941dce5a1f53308f87058eb/model.py
Adapted: the contract's SwiGLU(d_model, d_ff) builds the ModelArgs it takes with hidden_dim = d_ff (given, so
the 2/3 * 4 * dim rounding is skipped, as llama2.c does when hidden_dim is set); dropout 0.0, its default.
"""
from dataclasses import dataclass
from typing import Optional

import torch.nn.functional as F
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 4096
    hidden_dim: Optional[int] = None
    multiple_of: int = 256  # MLP hidden layer size will be multiple of
    dropout: float = 0.0


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        if args.hidden_dim is None:
            args.hidden_dim = 4 * args.dim
            args.hidden_dim = int(2 * args.hidden_dim / 3)
            args.hidden_dim = args.multiple_of * ((args.hidden_dim + args.multiple_of - 1) // args.multiple_of)
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
        self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.dropout = nn.Dropout(args.dropout)

    def forward(self, x):
        return self.dropout(self.w2(F.silu(self.w1(x)) * self.w3(x)))


class SwiGLU(FeedForward):
    def __init__(self, d_model, d_ff):
        super().__init__(ModelArgs(dim=d_model, hidden_dim=d_ff))
