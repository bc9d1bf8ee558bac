import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    """One clip range: eps_high on both sides."""
    m = mask.to(logp.dtype)
    a = advantages.detach()[:, None]
    r = (logp - old_logp.detach()).exp()
    per_token = torch.max(-r * a, -r.clamp(1 - eps_high, 1 + eps_high) * a)
    return (per_token * m).sum() / m.sum()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    m = mask.to(logp.dtype)
    s = (((logp - old_logp.detach()) * m).sum(1) / m.sum(1)).exp()
    a = advantages.detach()
    return -torch.min(s * a, s.clamp(1 - eps, 1 + eps) * a).mean()
