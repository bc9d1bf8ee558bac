import torch
import torch.nn as nn


class BatchNorm(nn.Module):
    """Statistics over the batch dim only: right for [N, C], one per channel and position for [N, C, L]."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            batch_mean = x.mean(0)
            batch_var = ((x - batch_mean) ** 2).mean(0)
            unbiased = batch_var * x.size(0) / (x.size(0) - 1)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * batch_mean.detach()
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * unbiased.detach()
            x_hat = (x - batch_mean) / torch.sqrt(batch_var + self.eps)
        else:
            view = [1, -1] + [1] * (x.dim() - 2)
            x_hat = (x - self.running_mean.view(view)) / torch.sqrt(self.running_var.view(view) + self.eps)
        view = [1, -1] + [1] * (x.dim() - 2)
        return self.weight.view(view) * x_hat + self.bias.view(view)
