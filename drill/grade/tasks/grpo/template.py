import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    """The GRPO loss (DeepSeekMath, Shao et al. 2024) for B prompts with G sampled completions each.

    logps, old_logps, ref_logps: [B*G, L] or [B, G, L], per-token log-probs of the sampled tokens under the
        current policy, the policy that sampled them, and the frozen reference; row b*G + g is completion g of prompt b
    rewards: [B, G], one scalar per completion
    mask: [B*G, L] or [B, G, L], bool or 0/1: True / 1 for the completion's tokens, False / 0 for padding
    advantage of completion (b, g): (r - mean_g r) / (std_g r + 1e-4), over its own group, std = torch.std (unbiased)
    per token: ratio = exp(logps - old_logps);
        objective = min(ratio * A, clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
        kl = exp(ref_logps - logps) - (ref_logps - logps) - 1   (the k3 estimator)
        loss_t = -(objective - beta * kl)
    returns: a 0-dim tensor, the mean of loss_t over all valid (unmasked) tokens of the batch
    """
    raise NotImplementedError
