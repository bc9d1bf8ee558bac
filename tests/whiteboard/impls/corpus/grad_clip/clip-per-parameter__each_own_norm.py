import torch


def clip_grad_norm(parameters, max_norm):
    norms = []
    for p in parameters:
        if p.grad is None:
            continue
        n = p.grad.norm()
        norms.append(n)
        if n > max_norm:
            p.grad.mul_(max_norm / (n + 1e-6))
    return torch.stack(norms).norm()
