import torch


def clip_grad_norm(parameters, max_norm):
    norms = []
    for p in parameters:
        if p.grad is None:
            continue
        norm = p.grad.norm()
        norms.append(norm)
        coef = max_norm / (norm + 1e-6)
        if coef < 1:
            p.grad.mul_(coef)  # each grad by its own norm
    return torch.stack(norms).norm()
