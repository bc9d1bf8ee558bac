import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    b, g = rewards.shape
    logps, old_logps, ref_logps = (t.reshape(b * g, -1) for t in (logps, old_logps, ref_logps))
    mask = mask.reshape(b * g, -1).to(logps.dtype)
    mean = rewards.mean(dim=1, keepdim=True)
    std = rewards.std(dim=1, keepdim=True)
    advantages = ((rewards - mean) / (std + 1e-4)).reshape(b * g, 1)
    ratio = torch.exp(logps - old_logps)
    objective = torch.min(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    per_token = -(objective - beta * kl)
    return ((per_token * mask).sum(dim=1) / mask.sum(dim=1)).mean()  # per sequence, then over sequences
