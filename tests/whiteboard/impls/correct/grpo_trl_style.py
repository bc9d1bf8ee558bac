import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    """TRL's shape of it: the loss form max(-r·A, -clip(r)·A), advantages repeated per completion, [B, G, L] kept."""
    g = rewards.shape[1]
    mean = rewards.mean(dim=1).repeat_interleave(g)
    std = rewards.std(dim=1).repeat_interleave(g)
    advantages = (rewards.reshape(-1) - mean) / (std + 1e-4)
    shape = (rewards.numel(), -1)
    logps, old_logps, ref_logps, mask = (t.reshape(shape) for t in (logps, old_logps, ref_logps, mask))
    coef_1 = torch.exp(logps - old_logps)
    coef_2 = torch.clamp(coef_1, 1 - clip_eps, 1 + clip_eps)
    per_token_loss = torch.max(-coef_1 * advantages[:, None], -coef_2 * advantages[:, None])
    per_token_kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    per_token_loss = per_token_loss + beta * per_token_kl
    mask = mask.bool()
    return per_token_loss[mask].mean()
