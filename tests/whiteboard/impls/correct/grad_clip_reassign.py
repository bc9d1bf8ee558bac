import math


def clip_grad_norm(parameters, max_norm):
    """A float norm, and the grads replaced by scaled copies rather than scaled in place."""
    params = [p for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float((p.grad * p.grad).sum()) for p in params))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for p in params:
            p.grad = p.grad * coef
    return total
