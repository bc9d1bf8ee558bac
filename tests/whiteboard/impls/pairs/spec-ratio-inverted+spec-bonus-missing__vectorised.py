import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    gamma = draft_tokens.numel()
    idx = torch.arange(gamma)
    ratio = (draft_probs[idx, draft_tokens] / target_probs[idx, draft_tokens]).clamp(max=1.0)
    rejected = (uniforms[:gamma] >= ratio).nonzero()
    if len(rejected) == 0:
        return draft_tokens.clone()
    i = int(rejected[0])
    r = (target_probs[i] - draft_probs[i]).clamp(min=0)
    cdf = (r / r.sum()).cumsum(0)
    new = torch.searchsorted(cdf, uniforms[i + 1 : i + 2], right=True).clamp(max=cdf.numel() - 1)
    return torch.cat([draft_tokens[:i], new])
