import math

import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    beta1, beta2 = betas
    with torch.no_grad():
        param.mul_(1 - lr * weight_decay)
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bc1 = 1 - beta1 ** step
        bc2 = 1 - beta2 ** step
        denom = (exp_avg_sq / bc2 + eps).sqrt()
        param.addcdiv_(exp_avg, denom, value=-lr / bc1)
