import torch


def _draw(probs, u):
    cdf = torch.cumsum(probs, dim=0)
    idx = int((cdf <= u).sum().item())
    return min(idx, probs.shape[0] - 1)


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    gamma = draft_tokens.shape[0]
    out = []
    for i in range(gamma):
        x = int(draft_tokens[i])
        p, q = target_probs[i, x], draft_probs[i, x]
        if uniforms[i] < min(1.0, (p / q).item()):
            out.append(x)
            continue
        residual = torch.clamp(target_probs[i] - draft_probs[i], min=0)
        residual = residual / residual.sum()
        return torch.tensor(out, dtype=torch.int64)
    out.append(_draw(target_probs[gamma], uniforms[gamma]))
    return torch.tensor(out, dtype=torch.int64)
