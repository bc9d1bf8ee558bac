import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    """Out-of-place arithmetic, written back with copy_ (the paper's m_hat / v_hat form)."""
    beta1, beta2 = betas
    with torch.no_grad():
        m = beta1 * exp_avg + (1 - beta1) * grad
        v = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1**step)
        v_hat = v / (1 - beta2**step)
        new = param * (1 - lr * weight_decay) - lr * m_hat / (torch.sqrt(v_hat) + eps)
        exp_avg.copy_(m)
        exp_avg_sq.copy_(v)
        param.copy_(new)
