import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    """The valid tokens picked out with a boolean index: a plain mean over them is the token-level mean."""
    keep = mask.bool()
    a = advantages.detach()[:, None].expand_as(logp)[keep]
    ratio = (logp[keep] - old_logp.detach()[keep]).exp()
    clipped = ratio.clamp(1 - eps_low, 1 + eps_high)
    return torch.max(-ratio * a, -clipped * a).mean()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    """The sequence ratio as a geometric mean of token ratios, one loop step per completion."""
    losses = []
    for row_logp, row_old, a, row_mask in zip(logp, old_logp.detach(), advantages.detach(), mask.bool()):
        s = torch.exp((row_logp[row_mask] - row_old[row_mask]).mean())
        losses.append(-torch.minimum(s * a, s.clamp(1 - eps, 1 + eps) * a))
    return torch.stack(losses).mean()
