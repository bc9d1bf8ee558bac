import torch


def clip_grad_norm(parameters, max_norm):
    """Clip gradients by their global L2 norm, in place, as torch.nn.utils.clip_grad_norm_ does.

    parameters: a list of tensors (nn.Parameters) whose .grad is a tensor of the same shape, or None (skip it)
    max_norm: float
    total_norm = the L2 norm of all the gradients together (as if concatenated into one vector);
    when total_norm > max_norm, multiply every .grad in place by max_norm / (total_norm + 1e-6);
    otherwise leave the gradients unchanged.
    returns total_norm (a 0-dim tensor or a float), measured before clipping.
    Rules: no torch.nn.utils.clip_grad_norm_ / get_total_norm; do not change the parameters' values.
    """
    raise NotImplementedError
