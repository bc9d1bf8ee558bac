import torch


def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    """DAPO's policy loss (Yu et al. 2025) for one group of G sampled completions: clip-higher, token-level mean.

    logp, old_logp: [G, T], per-token log-probs of the sampled tokens under the current and the sampling policy
    advantages: [G], one per completion (already group-normalised), broadcast over its tokens; a constant
    mask: [G, T], bool or 0/1: True / 1 for the completion's tokens, False / 0 for padding
    per token: ratio = exp(logp - old_logp); objective = min(ratio * A, clamp(ratio, 1 - eps_low, 1 + eps_high) * A)
    returns: a 0-dim tensor, -objective averaged over every valid token of the whole group (not per completion first)
    """
    raise NotImplementedError


def gspo_loss(logp, old_logp, advantages, mask, eps):
    """GSPO's policy loss (Zheng et al. 2025): one importance ratio per sequence, clipped per sequence.

    shapes as in dapo_loss; eps: the clip range (the paper uses values around 3e-4)
    per completion i: s_i = exp(mean over its valid tokens of (logp - old_logp))   (the length-normalised ratio)
        objective_i = min(s_i * A_i, clamp(s_i, 1 - eps, 1 + eps) * A_i)
    returns: a 0-dim tensor, -objective averaged over the G completions
    """
    raise NotImplementedError
