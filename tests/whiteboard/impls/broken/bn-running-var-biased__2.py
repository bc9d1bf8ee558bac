import torch
from torch import nn


# After d2l.ai, "Batch Normalization" (§8.5), batch_norm from scratch (torch edition): train vs eval told by grad mode,
# torch's momentum convention, but the BIASED batch variance into the running estimate. The adapter gives it torch's
# names and [N, C, L] inputs (as [N, C, L, 1]: the original takes 2-D or 4-D).
def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        x4 = x.reshape(x.shape[0], x.shape[1], -1, 1) if x.dim() == 3 else x
        view = (1, -1, 1, 1) if x4.dim() == 4 else (-1,)
        with torch.set_grad_enabled(self.training):  # the original tells train from eval by grad mode
            y, mean, var = batch_norm(x4, self.weight.reshape(view), self.bias.reshape(view), self.running_mean.reshape(view),
                                      self.running_var.reshape(view), self.eps, self.momentum)
        self.running_mean, self.running_var = mean.reshape(-1), var.reshape(-1)
        return y.reshape(x.shape)
