import torch


def compute_gae(rewards, values, dones, gamma, lam):
    """TD errors at once, then the recursion collected in a list and stacked back into time order."""
    live = (~dones.bool()).to(rewards.dtype)
    deltas = rewards + gamma * values[1:] * live - values[:-1]
    out = []
    running = torch.zeros_like(deltas[-1])
    for t in range(len(deltas) - 1, -1, -1):
        running = deltas[t] + gamma * lam * live[t] * running
        out.append(running)
    advantages = torch.stack(out[::-1])
    return advantages, advantages + values[: len(deltas)]


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    """The clip written per sign of A: the ratio is capped above for A >= 0, below for A < 0."""
    a = advantages.detach()
    ratio = (logp - old_logp.detach()).exp()
    capped = torch.where(a >= 0, ratio.clamp(max=1 + clip_eps), ratio.clamp(min=1 - clip_eps))
    per_token = -torch.minimum(ratio * a, capped * a)
    weights = torch.ones_like(per_token) if mask is None else mask.to(per_token.dtype)
    return (per_token * weights).sum() / weights.sum()
