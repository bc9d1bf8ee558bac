import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    """Grouped [B, G, L] throughout, the clip written as a where on the advantage's sign, padding zeroed by where."""
    b, g = rewards.shape
    lp, old, ref = (t.reshape(b, g, -1) for t in (logps, old_logps, ref_logps))
    valid = mask.reshape(b, g, -1) != 0
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    std = torch.sqrt((centred**2).sum(dim=-1, keepdim=True) / (g - 1))
    adv = (centred / (std + 1e-4))[..., None]
    ratio = torch.exp(lp - old)
    capped = torch.where(adv >= 0, torch.clamp(ratio, max=1 + clip_eps), torch.clamp(ratio, min=1 - clip_eps))
    objective = capped * adv  # min(r A, clip(r) A): only the side the advantage pushes towards is capped
    log_ratio = ref - lp
    kl = torch.expm1(log_ratio) - log_ratio
    per_token = torch.where(valid, beta * kl - objective, torch.zeros_like(lp))
    return per_token.sum() / valid.sum()
