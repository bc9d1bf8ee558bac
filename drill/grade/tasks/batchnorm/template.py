import torch
from torch import nn


class BatchNorm(nn.Module):
    """Batch normalisation over the channel dim, written by hand (as nn.BatchNorm1d).

    x: [N, C] or [N, C, L], C = num_features   returns: x's shape, dtype and device.
    Parameters weight [C] (starts at 1) and bias [C] (starts at 0); buffers running_mean [C] (0) and running_var [C] (1).
    train mode (self.training): normalise each channel with the batch's mean and BIASED variance over N (and L),
        y = (x - mean) / sqrt(var + eps) * weight + bias; then, without gradient,
        running = (1 - momentum) * running + momentum * batch statistic (the UNBIASED variance for running_var).
    eval mode: normalise with running_mean and running_var; change nothing.
    Rules: no F.batch_norm / nn.BatchNorm*, do not modify x.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError
