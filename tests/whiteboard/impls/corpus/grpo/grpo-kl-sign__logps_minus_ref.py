import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    B, G = rewards.shape
    L = logps.shape[-1]
    logps, old_logps, ref_logps = (t.reshape(B * G, L) for t in (logps, old_logps, ref_logps))
    mask = mask.reshape(B * G, L).to(logps.dtype)
    mean = rewards.mean(dim=1, keepdim=True)
    std = rewards.std(dim=1, keepdim=True)
    adv = ((rewards - mean) / (std + 1e-4)).reshape(B * G, 1)
    ratio = torch.exp(logps - old_logps)
    obj = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    kl = torch.exp(logps - ref_logps) - (logps - ref_logps) - 1
    loss_t = -(obj - beta * kl)
    return (loss_t * mask).sum() / mask.sum()
