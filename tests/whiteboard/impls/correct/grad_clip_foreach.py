import torch


def clip_grad_norm(parameters, max_norm):
    """torch's own recipe: per-tensor norms, their norm, a clamped coefficient, one multiply."""
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    clip_coef = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.detach().mul_(clip_coef)
    return total_norm
