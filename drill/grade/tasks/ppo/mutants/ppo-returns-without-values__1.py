import torch


def compute_gae(rewards, values, dones, gamma, lam):
    not_done = 1.0 - dones.to(rewards.dtype)
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in reversed(range(rewards.shape[0])):
        delta = rewards[t] + gamma * values[t + 1] * not_done[t] - values[t]
        last = delta + gamma * lam * not_done[t] * last
        advantages[t] = last
    return advantages, advantages.clone()


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    old_logp, advantages = old_logp.detach(), advantages.detach()
    ratio = torch.exp(logp - old_logp)
    objective = torch.min(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    if mask is None:
        return -objective.mean()
    mask = mask.to(logp.dtype)
    return -(objective * mask).sum() / mask.sum()
