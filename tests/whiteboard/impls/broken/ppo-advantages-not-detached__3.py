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
    """The PPO paper's formula typed as it reads: nothing detached."""
    ratio = (logp - old_logp).exp()
    surrogate = torch.minimum(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages)
    if mask is None:
        return -surrogate.mean()
    return -surrogate[mask.bool()].mean()
