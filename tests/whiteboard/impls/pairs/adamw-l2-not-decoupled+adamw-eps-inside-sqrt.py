import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    b1, b2 = betas
    with torch.no_grad():
        g = grad + weight_decay * param
        exp_avg.mul_(b1).add_(g, alpha=1 - b1)
        exp_avg_sq.mul_(b2).addcmul_(g, g, value=1 - b2)
        m_hat = exp_avg / (1 - b1 ** step)
        v_hat = exp_avg_sq / (1 - b2 ** step)
        param.sub_(lr * m_hat / torch.sqrt(v_hat + eps))
