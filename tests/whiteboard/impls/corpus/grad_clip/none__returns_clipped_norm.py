import torch


def clip_grad_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))
    if total_norm > max_norm:
        coef = max_norm / (total_norm + 1e-6)
        for g in grads:
            g.mul_(coef)
    return torch.sqrt(sum((g ** 2).sum() for g in grads))
