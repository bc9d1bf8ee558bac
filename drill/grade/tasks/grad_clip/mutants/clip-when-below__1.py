import torch


def clip_grad_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.sqrt(sum((g ** 2).sum() for g in grads))
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))  # also scales small gradients up
    return total
