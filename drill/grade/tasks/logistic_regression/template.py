import torch


def bce_with_logits(logits, targets):
    """Mean binary cross-entropy of logits against targets in [0, 1], written by hand.

    logits, targets: the same shape, float   returns: a 0-dim tensor in the logits' dtype, the mean over every
    element of -(y·log σ(z) + (1 - y)·log(1 - σ(z))). Finite and accurate for any logit, |z| = 1000 included.
    Rules: no F.binary_cross_entropy(_with_logits), do not modify the inputs.
    """
    raise NotImplementedError


def fit_logistic_regression(x, y, lr, steps):
    """Logistic regression by full-batch gradient descent, with the gradient written by hand (no autograd).

    x: [N, D] float   y: [N], 0. or 1.   lr: float   steps: int
    Start from w = 0 [D] and b = 0 (a 0-dim tensor); each step moves both against the gradient of the mean
    bce_with_logits(x @ w + b, y). returns: (w [D], b 0-dim), in x's dtype.
    Rules: no .backward() / torch.autograd, do not modify the inputs.
    """
    raise NotImplementedError
