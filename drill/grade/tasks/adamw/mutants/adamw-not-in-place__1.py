import torch


@torch.no_grad()
def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    beta1, beta2 = betas
    param = param * (1 - lr * weight_decay)  # new tensors: the caller's param and moments never change
    exp_avg = beta1 * exp_avg + (1 - beta1) * grad
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
    m_hat = exp_avg / (1 - beta1**step)
    v_hat = exp_avg_sq / (1 - beta2**step)
    param = param - lr * m_hat / (v_hat.sqrt() + eps)
    return param
