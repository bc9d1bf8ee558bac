import torch
from torch import nn


class BatchNorm(nn.Module):
    """Statistics over the flattened non-channel dims ([N, C, L] moved to [C, N·L]); buffers replaced, not updated in place."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        flat = x.transpose(0, 1).reshape(self.num_features, -1)  # [C, N·L]
        if self.training:
            mean = flat.mean(dim=1)
            var = ((flat - mean[:, None]) ** 2).mean(dim=1)
            n = flat.shape[1]
            m = self.momentum
            self.running_mean = ((1 - m) * self.running_mean + m * mean).detach()
            self.running_var = ((1 - m) * self.running_var + m * var * n / (n - 1)).detach()
        else:
            mean, var = self.running_mean, self.running_var
        view = (1, -1) + (1,) * (x.dim() - 2)
        scale = self.weight / torch.sqrt(var + self.eps)
        return x * scale.view(view) + (self.bias - mean * scale).view(view)
