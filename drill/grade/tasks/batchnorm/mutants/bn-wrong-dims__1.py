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
        dims = [0]  # the length dim of [N, C, L] forgotten
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            mean = x.mean(dim=dims, keepdim=True)  # [1, C, L]: one mean per channel and position
            var = x.var(dim=dims, unbiased=False, keepdim=True)
            with torch.no_grad():
                n = x.shape[0]
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean.reshape(x.shape[1], -1).mean(-1))
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var.reshape(x.shape[1], -1).mean(-1) * n / (n - 1))
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
