import torch
from torch import nn


class BatchNorm(nn.Module):
    """Statistics always from the batch, running buffers kept only for show (the 'it trains fine' version)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        dims = (0,) if x.dim() == 2 else (0, 2)
        view = (1, -1) + (1,) * (x.dim() - 2)
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, unbiased=False, keepdim=True)
        if self.training:
            n = x.numel() // x.shape[1]
            with torch.no_grad():
                self.running_mean.lerp_(mean.reshape(-1), self.momentum)
                self.running_var.lerp_(var.reshape(-1) * n / (n - 1), self.momentum)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight.view(view) + self.bias.view(view)
