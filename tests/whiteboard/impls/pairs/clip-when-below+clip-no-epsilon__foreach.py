import torch


def clip_grad_norm(parameters, max_norm):
    """Rescales every gradient to exactly max_norm, small ones too, with a bare division."""
    grads = [p.grad for p in parameters if p.grad is not None]
    norms = torch._foreach_norm(grads)
    total = torch.linalg.vector_norm(torch.stack(norms))
    torch._foreach_mul_(grads, max_norm / total)
    return total
