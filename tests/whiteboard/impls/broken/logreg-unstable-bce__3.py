import torch


def bce_with_logits(logits, targets, eps=1e-7):
    """The blog-post form: probabilities clipped away from 0 and 1 (finite, but wrong for large logits)."""
    p = torch.sigmoid(logits).clamp(eps, 1 - eps)
    return -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p)).mean()


def fit_logistic_regression(x, y, lr, steps):
    w, b = torch.zeros(x.shape[1], dtype=x.dtype, device=x.device), torch.zeros((), dtype=x.dtype, device=x.device)
    for _ in range(steps):
        e = torch.sigmoid(x @ w + b) - y
        w, b = w - lr * x.T @ e / len(y), b - lr * e.mean()
    return w, b
