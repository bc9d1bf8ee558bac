import torch


def mlp_forward_backward(x, w1, b1, w2, b2, y):
    """A two-layer MLP's forward pass and its backward pass by hand (no autograd).

    x: [N, D]   w1: [D, H]   b1: [H]   w2: [H, C]   b2: [C]   y: int64 [N], class ids in [0, C)
    forward: h = relu(x @ w1 + b1); logits = h @ w2 + b2; loss = mean over the N samples of -log softmax(logits)[y]
    returns: (loss 0-dim, dw1 [D, H], db1 [H], dw2 [H, C], db2 [C]), the gradients of that loss, in x's dtype.
    Rules: no .backward() / torch.autograd / torch.func, do not modify the inputs.
    """
    raise NotImplementedError
