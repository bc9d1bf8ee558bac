import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum, training):
    """d2l.ai's from-scratch batch_norm (§8.5), with torch's momentum convention and the unbiased running variance."""
    if not training:
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        dims = (0,) if X.dim() == 2 else (0, 2)
        mean = X.mean(dim=dims, keepdim=True)
        var = ((X - mean) ** 2).mean(dim=dims, keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        n = X.numel() // X.shape[1]
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var * n / (n - 1)
    return gamma * X_hat + beta, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        view = (1, -1) + (1,) * (x.dim() - 2)
        y, mean, var = batch_norm(x, self.weight.view(view), self.bias.view(view), self.running_mean.view(view),
                                  self.running_var.view(view), self.eps, self.momentum, self.training)
        self.running_mean, self.running_var = mean.reshape(-1), var.reshape(-1)
        return y
