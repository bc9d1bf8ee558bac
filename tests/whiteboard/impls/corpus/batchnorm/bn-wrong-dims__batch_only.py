import torch
from torch import nn


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        dims = [0]
        shape = (1, -1) if x.dim() == 2 else (1, x.shape[1], x.shape[2])
        if self.training:
            mean = x.mean(dim=dims)
            var = x.var(dim=dims, unbiased=False)
            n = x.shape[0]
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
            shape = (1, -1) if x.dim() == 2 else (1, -1, 1)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        return y * self.weight.view(shape) + self.bias.view(shape)
