import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    mask = mask.to(logp.dtype)
    a = advantages.detach()[:, None]
    ratio = torch.exp(logp - old_logp.detach())
    objective = torch.min(ratio * a, torch.clamp(ratio, 1 - eps_low, 1 + eps_low) * a)
    return -(objective * mask).sum() / mask.sum()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    mask = mask.to(logp.dtype)
    a = advantages.detach()
    log_ratio = ((logp - old_logp.detach()) * mask).sum(dim=1) / mask.sum(dim=1)
    ratio = torch.exp(log_ratio)
    objective = torch.min(ratio * a, torch.clamp(ratio, 1 - eps, 1 + eps) * a)
    return -objective.mean()
