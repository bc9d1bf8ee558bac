import torch
import torch.nn.functional as F


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    """The textbook per-sample gradient, summed over the batch and never averaged (the loss itself is the mean)."""
    n = x.shape[0]
    z1 = x @ w1 + b1
    h = z1.relu()
    logits = h @ w2 + b2
    probs = F.softmax(logits, dim=1)
    loss = -torch.log_softmax(logits, dim=1)[torch.arange(n), y].mean()
    dscores = probs.clone()
    dscores[torch.arange(n), y] -= 1
    dh = dscores @ w2.T
    dh[z1 <= 0] = 0
    return loss, x.T @ dh, dh.sum(0), h.T @ dscores, dscores.sum(0)
