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
    """π/π_old taken as a quotient of the log-probs."""
    ratio = logp / old_logp.detach()
    a = advantages.detach()
    obj = torch.min(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    m = torch.ones_like(obj) if mask is None else mask.to(obj.dtype)
    return -(obj * m).sum() / m.sum()
