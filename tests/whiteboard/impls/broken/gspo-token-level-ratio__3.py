import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    m = mask.to(logp.dtype)
    a = advantages.detach()[:, None]
    r = (logp - old_logp.detach()).exp()
    per_token = -torch.min(r * a, r.clamp(1 - eps_low, 1 + eps_high) * a)
    return (per_token * m).sum() / m.sum()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    """GRPO's per-token clip with a symmetric eps, averaged per sequence: the ratio is never made per sequence."""
    return _per_sequence(logp, old_logp, advantages, mask, eps)


def _per_sequence(logp, old_logp, advantages, mask, eps):
    m = mask.to(logp.dtype)
    a = advantages.detach()[:, None]
    r = (logp - old_logp.detach()).exp()
    per_token = -torch.min(r * a, r.clamp(1 - eps, 1 + eps) * a)
    return ((per_token * m).sum(1) / m.sum(1)).mean()
