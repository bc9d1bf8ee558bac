import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    """The clip written by the advantage's sign, padding zeroed with torch.where."""
    m = mask.bool()
    a = advantages.detach().unsqueeze(-1)
    ratio = torch.exp(logp - old_logp.detach())
    capped = torch.where(a >= 0, ratio.clamp(max=1 + eps_high), ratio.clamp(min=1 - eps_low))
    per_token = -torch.minimum(ratio * a, capped * a)
    return torch.where(m, per_token, torch.zeros_like(per_token)).sum() / m.sum()


def gspo_loss(logp, old_logp, advantages, mask, eps):
    m = mask.to(logp.dtype)
    a = advantages.detach()
    seq_log_ratio = torch.einsum("gt,gt->g", logp - old_logp.detach(), m) / m.sum(-1)
    s = seq_log_ratio.exp()
    return torch.max(-s * a, -s.clamp(1 - eps, 1 + eps) * a).mean()
