import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    b1, b2 = betas
    with torch.no_grad():
        exp_avg = b1 * exp_avg + (1 - b1) * grad
        exp_avg_sq = b2 * exp_avg_sq + (1 - b2) * grad * grad
        m_hat = exp_avg / (1 - b1 ** step)
        v_hat = exp_avg_sq / (1 - b2 ** step)
        param -= lr * weight_decay * param
        param -= lr * m_hat / (v_hat.sqrt() + eps)
