import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    p = torch.nn.Parameter(param.detach().clone())
    opt = torch.optim.AdamW([p], lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=False)
    opt.state[p] = {"step": torch.tensor(float(step - 1)), "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
    p.grad = grad.clone()
    opt.step()
    with torch.no_grad():
        param.copy_(p)
