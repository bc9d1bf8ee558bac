import torch


def clip_grad_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.sqrt(sum((g ** 2).sum() for g in grads))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        with torch.no_grad():
            for p in parameters:
                if p.grad is not None:
                    p.grad.mul_(coef)
                    p.mul_(coef)  # clips the weights too
    return total
