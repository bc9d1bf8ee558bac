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
        dims = [0] if x.dim() == 2 else [0, 2]
        shape = [1, -1] + [1] * (x.dim() - 2)
        batch_mean, batch_var = x.mean(dim=dims), x.var(dim=dims, unbiased=False)
        mean, var = (batch_mean, batch_var) if self.training else (self.running_mean.clone(), self.running_var.clone())
        y = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps) * self.weight.reshape(shape) + self.bias.reshape(shape)
        with torch.no_grad():  # the update is outside `if self.training`
            n = x.numel() // x.shape[1]
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * batch_mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * batch_var * n / (n - 1))
        return y
