import torch


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    """The backward of ReLU written as ReLU of the gradient."""
    n = x.shape[0]
    h = torch.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = torch.log_softmax(logits, dim=-1)
    loss = -logp.gather(1, y[:, None]).mean()
    g = logp.exp()
    g[torch.arange(n), y] -= 1
    g = g / n
    dz = torch.relu(g @ w2.T)  # relu applied to the gradient, not its derivative at z1
    return loss, x.T @ dz, dz.sum(0), h.T @ g, g.sum(0)
