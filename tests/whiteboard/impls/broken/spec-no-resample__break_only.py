import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    gamma = draft_tokens.numel()
    idx = torch.arange(gamma)
    ratio = (target_probs[idx, draft_tokens] / draft_probs[idx, draft_tokens]).clamp(max=1.0)
    rejected = (uniforms[:gamma] >= ratio).nonzero()
    if len(rejected):
        return draft_tokens[: int(rejected[0])].clone()  # keep what was accepted
    cdf = target_probs[gamma].cumsum(0)
    bonus = torch.searchsorted(cdf, uniforms[gamma:], right=True).clamp(max=cdf.numel() - 1)
    return torch.cat([draft_tokens, bonus])
