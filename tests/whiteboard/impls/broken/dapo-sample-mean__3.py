import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    """GRPO's paper form kept: 1/G Σ_i 1/|o_i| Σ_t, only the clip made asymmetric."""
    total = 0.0
    for lp, old, a, m in zip(logp, old_logp.detach(), advantages.detach(), mask.bool()):
        r = (lp[m] - old[m]).exp()
        total = total - torch.min(r * a, r.clamp(1 - eps_low, 1 + eps_high) * a).mean()
    return total / logp.shape[0]


def gspo_loss(logp, old_logp, advantages, mask, eps):
    m = mask.to(logp.dtype)
    s = (((logp - old_logp.detach()) * m).sum(1) / m.sum(1)).exp()
    a = advantages.detach()
    return -torch.min(s * a, s.clamp(1 - eps, 1 + eps) * a).mean()
