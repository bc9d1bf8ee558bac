import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    """All acceptance tests at once, then one draw at the first rejection (or the bonus)."""
    gamma = draft_tokens.shape[0]
    rows = torch.arange(gamma, device=draft_tokens.device)
    p = target_probs[rows, draft_tokens]
    q = draft_probs[rows, draft_tokens]
    accepted = uniforms[:gamma] < torch.minimum(torch.ones_like(p), p / q)
    n = int(accepted.long().cumprod(0).sum())  # drafts accepted before the first rejection
    if n < gamma:
        dist = torch.relu(target_probs[n] - draft_probs[n])
        dist = dist / dist.sum()
    else:
        dist = target_probs[gamma]
    cdf = torch.cumsum(dist, 0)
    last = int(torch.nonzero(dist).max())
    extra = min(int((cdf <= uniforms[n + (n < gamma)]).sum()), last)
    return torch.cat([draft_tokens[:n], torch.tensor([extra], device=draft_tokens.device)])
