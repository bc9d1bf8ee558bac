import math


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    """Through .data, nanoGPT-era style: add_/addcmul_ on the moments, a step size folding both corrections."""
    beta1, beta2 = betas
    p = param.data
    p.mul_(1 - lr * weight_decay)
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step_size = lr / (1 - beta1**step)
    denom = exp_avg_sq.sqrt().div_(math.sqrt(1 - beta2**step)).add_(eps)
    p.addcdiv_(exp_avg, denom, value=-step_size)
