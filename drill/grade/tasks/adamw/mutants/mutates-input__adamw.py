import math

import torch


@torch.no_grad()
def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    beta1, beta2 = betas
    param.mul_(1 - lr * weight_decay)
    grad.mul_(1 - beta1)  # scales the caller's gradient in place
    exp_avg.mul_(beta1).add_(grad)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=(1 - beta2) / (1 - beta1) ** 2)
    denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**step)).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))
