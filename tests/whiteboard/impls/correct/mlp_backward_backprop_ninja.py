import torch
import torch.nn.functional as F


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    """In the style of Karpathy's "Becoming a backprop ninja": F.softmax for the probabilities, the one-hot by indexing."""
    n = x.shape[0]
    hpre = x @ w1 + b1
    h = F.relu(hpre)
    logits = h @ w2 + b2
    loss = F.cross_entropy(logits, y)
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), y] -= 1
    dlogits /= n
    dh = dlogits @ w2.T
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpre = (hpre > 0).to(dh.dtype) * dh
    dw1 = x.T @ dhpre
    db1 = dhpre.sum(0)
    return loss, dw1, db1, dw2, db2
