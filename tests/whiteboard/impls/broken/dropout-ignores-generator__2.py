import torch


# d2l.ai, "Dropout" (§5.6, from-scratch implementation), verbatim; the adapter gives it the contract's signature.
def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    if dropout == 1:
        return torch.zeros_like(X)
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)


def dropout(x, p, training, generator=None):
    return dropout_layer(x, p) if training else x
