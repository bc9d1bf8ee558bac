import torch
from torch import nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    """The SwiGLU feed-forward layer of LLaMA / PaLM: w2(silu(w1 x) * w3 x).

    __init__(d_model, d_ff): three bias-free nn.Linear layers, named w1 (gate, d_model -> d_ff),
    w3 (up, d_model -> d_ff) and w2 (down, d_ff -> d_model); or gate_proj, up_proj, down_proj.
    forward(x): x [..., d_model] -> [..., d_model]; each token on its own.
    """

    def __init__(self, d_model, d_ff):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError
