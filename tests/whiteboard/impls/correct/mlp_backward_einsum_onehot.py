import torch


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    """Einsum for every product, an explicit one-hot, log-softmax through torch.logsumexp."""
    n, c = x.shape[0], w2.shape[1]
    z = torch.einsum("nd,dh->nh", x, w1) + b1
    h = z.clamp(min=0)
    logits = torch.einsum("nh,hc->nc", h, w2) + b2
    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    onehot = torch.zeros(n, c, dtype=x.dtype, device=x.device).scatter_(1, y[:, None], 1.0)
    loss = -(onehot * logp).sum() / n
    g = (logp.exp() - onehot) / n
    dz = torch.einsum("nc,hc->nh", g, w2) * (z > 0)
    return loss, torch.einsum("nd,nh->dh", x, dz), dz.sum(0), torch.einsum("nh,nc->hc", h, g), g.sum(0)
