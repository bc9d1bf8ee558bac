import torch


def compute_gae(rewards, values, dones, gamma, lam):
    """CleanRL's loop taken as-is: it reads dones[t + 1] (its flags mark the first step of a new episode)."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    n = rewards.shape[0]
    for t in reversed(range(n)):
        nextnonterminal = 1.0 if t == n - 1 else 1.0 - dones[t + 1].to(rewards.dtype)
        delta = rewards[t] + gamma * values[t + 1] * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values[:-1]


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    ratio = torch.exp(logp - old_logp.detach())
    a = advantages.detach()
    obj = torch.min(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    m = torch.ones_like(obj) if mask is None else mask.to(obj.dtype)
    return -(obj * m).sum() / m.sum()
