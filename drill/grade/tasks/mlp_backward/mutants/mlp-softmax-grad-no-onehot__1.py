import torch


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    n = x.shape[0]
    z1 = x @ w1 + b1
    h = torch.relu(z1)
    logits = h @ w2 + b2
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    logp = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    loss = -logp[torch.arange(n, device=x.device), y].mean()
    dlogits = logp.exp()
    dlogits = dlogits / n  # the mean over the batch
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(dim=0)
    dh = dlogits @ w2.T
    dz1 = dh * (z1 > 0)  # ReLU passes the gradient where its input was positive
    dw1 = x.T @ dz1
    db1 = dz1.sum(dim=0)
    return loss, dw1, db1, dw2, db2
