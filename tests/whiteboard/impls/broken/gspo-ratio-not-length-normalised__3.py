import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    m = mask.to(logp.dtype)
    a = advantages.detach()[:, None]
    r = (logp - old_logp.detach()).exp()
    per_token = -torch.min(r * a, r.clamp(1 - eps_low, 1 + eps_high) * a)
    return (per_token * m).sum() / m.sum()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    """π(y)/π_old(y) as the product of the token ratios, padding set to ratio 1."""
    token_ratio = torch.where(mask.bool(), (logp - old_logp.detach()).exp(), torch.ones_like(logp))
    s = token_ratio.prod(dim=1)
    a = advantages.detach()
    return -torch.min(s * a, s.clamp(1 - eps, 1 + eps) * a).mean()
