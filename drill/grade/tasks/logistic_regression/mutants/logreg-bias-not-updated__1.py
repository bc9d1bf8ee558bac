import torch


def bce_with_logits(logits, targets):
    # log(1 + e^z) - z·y, with log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no exp overflows, no log(0)
    return (logits.clamp(min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))).mean()


def fit_logistic_regression(x, y, lr, steps):
    n, d = x.shape
    w = torch.zeros(d, dtype=x.dtype, device=x.device)
    b = torch.zeros((), dtype=x.dtype, device=x.device)
    for _ in range(steps):
        p = torch.sigmoid(x @ w + b)
        error = p - y  # d(mean loss)/dz, times N
        w = w - lr * (x.T @ error) / n
    return w, b
