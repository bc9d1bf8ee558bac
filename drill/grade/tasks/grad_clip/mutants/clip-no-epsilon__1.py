import torch


def clip_grad_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.sqrt(sum((g ** 2).sum() for g in grads))
    coef = torch.clamp(max_norm / total, max=1.0)  # 0 / 0 for all-zero gradients
    for g in grads:
        g.mul_(coef)
    return total
