import torch


def bce_with_logits(logits, targets):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)


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
