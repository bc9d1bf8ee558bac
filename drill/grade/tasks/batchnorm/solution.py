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
        dims = [0] if x.dim() == 2 else [0, 2]  # every dim but the channels
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            mean = x.mean(dim=dims)
            var = x.var(dim=dims, unbiased=False)  # biased: what the batch is normalised with
            with torch.no_grad():
                n = x.numel() // x.shape[1]
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))  # unbiased
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
