import torch


def _inverse_cdf(weights, u):
    total, running = sum(weights), 0.0
    for token, w in enumerate(weights):
        running += w / total
        if running > u:
            return token
    return max(t for t, w in enumerate(weights) if w > 0)


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    """Plain Python floats: u * q < p is the acceptance test without a division."""
    p, q, u = target_probs.tolist(), draft_probs.tolist(), uniforms.tolist()
    tokens = []
    for i, x in enumerate(draft_tokens.tolist()):
        if u[i] * q[i][x] < p[i][x]:
            tokens.append(x)
        else:
            tokens.append(_inverse_cdf([max(0.0, a - b) for a, b in zip(p[i], q[i])], u[i + 1]))
            break
    else:
        tokens.append(_inverse_cdf(p[-1], u[-1]))
    return torch.tensor(tokens, dtype=torch.long, device=draft_tokens.device)
