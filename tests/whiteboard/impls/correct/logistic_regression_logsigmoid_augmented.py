import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    """-(y·log σ(z) + (1 - y)·log σ(-z)), each log σ computed stably by torch."""
    return -(targets * F.logsigmoid(logits) + (1 - targets) * F.logsigmoid(-logits)).mean()


def fit_logistic_regression(x, y, lr, steps):
    """The bias as a weight on a column of ones: theta = [w, b]."""
    n = x.shape[0]
    xa = torch.cat([x, torch.ones(n, 1, dtype=x.dtype, device=x.device)], dim=1)
    theta = torch.zeros(xa.shape[1], dtype=x.dtype, device=x.device)
    for _ in range(steps):
        grad = xa.T @ (torch.sigmoid(xa @ theta) - y) / n
        theta = theta - lr * grad
    return theta[:-1], theta[-1]
