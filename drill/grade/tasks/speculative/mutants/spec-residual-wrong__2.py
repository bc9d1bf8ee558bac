import torch


def _draw(probs, u):
    """Inverse CDF: the first index whose cumulative probability exceeds u."""
    cdf = probs.cumsum(0)
    return int(torch.searchsorted(cdf, u.reshape(1), right=True).clamp(max=probs.numel() - 1))


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    out = []
    for i, x in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i, x], draft_probs[i, x]
        if uniforms[i] < torch.clamp(p / q, max=1.0):
            out.append(x)
            continue
        residual = (target_probs[i] - draft_probs[i]).abs()
        out.append(_draw(residual / residual.sum(), uniforms[i + 1]))
        return torch.tensor(out, dtype=torch.int64, device=draft_tokens.device)
    out.append(_draw(target_probs[-1], uniforms[-1]))
    return torch.tensor(out, dtype=torch.int64, device=draft_tokens.device)
