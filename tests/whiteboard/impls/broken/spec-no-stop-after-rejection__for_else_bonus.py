import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    emitted = []
    for i in range(len(draft_tokens)):
        tok = draft_tokens[i].item()
        if uniforms[i].item() < min(1.0, target_probs[i, tok].item() / draft_probs[i, tok].item()):
            emitted.append(tok)
        else:
            r = (target_probs[i] - draft_probs[i]).clamp_min(0)
            cdf = torch.cumsum(r / r.sum(), 0)
            emitted.append(int((cdf <= uniforms[i + 1]).sum().clamp(max=len(cdf) - 1)))
    cdf = torch.cumsum(target_probs[-1], 0)  # the loop always gets here
    emitted.append(int((cdf <= uniforms[-1]).sum().clamp(max=len(cdf) - 1)))
    return torch.tensor(emitted, dtype=torch.int64)
