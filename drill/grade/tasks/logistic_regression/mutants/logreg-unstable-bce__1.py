import torch


def bce_with_logits(logits, targets):
    p = torch.sigmoid(logits)
    return -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p)).mean()  # log(0) for large |z|


def fit_logistic_regression(x, y, lr, steps):
    n, d = x.shape
    w = torch.zeros(d, dtype=x.dtype, device=x.device)
    b = torch.zeros((), dtype=x.dtype, device=x.device)
    for _ in range(steps):
        p = torch.sigmoid(x @ w + b)
        error = p - y  # d(mean loss)/dz, times N
        w = w - lr * (x.T @ error) / n
        b = b - lr * error.mean()
    return w, b
