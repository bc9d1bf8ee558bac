import torch


def compute_gae(rewards, values, dones, gamma, lam):
    T = rewards.shape[0]
    notdone = 1.0 - dones.to(rewards.dtype)
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in reversed(range(T)):
        delta = rewards[t] + gamma * values[t + 1] * notdone[t] - values[t]
        last = delta + gamma * lam * notdone[t] * last
        adv[t] = last
    return adv, adv + values[:T]


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    ratio = torch.exp(logp - old_logp)
    adv = advantages
    obj = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    if mask is None:
        return -obj.mean()
    m = mask.to(obj.dtype)
    return -(obj * m).sum() / m.sum()
