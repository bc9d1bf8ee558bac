import math

import torch


def _filter_row(row, temperature, top_k, top_p):
    row = [x / temperature for x in row]
    order = sorted(range(len(row)), key=lambda i: -row[i])
    keep = order[: top_k] if top_k > 0 else order
    if top_p < 1.0:
        top = row[keep[0]]
        weights = [math.exp(row[i] - top) for i in keep]
        total, mass, nucleus = sum(weights), 0.0, []
        for i, w in zip(keep, weights):
            if nucleus and mass >= top_p:
                break
            nucleus.append(i)
            mass += w / total
        keep = nucleus
    kept = set(keep)
    return [x if i in kept else float("-inf") for i, x in enumerate(row)]


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """Plain Python, one row at a time (float64 inside, cast back)."""
    rows = logits.reshape(-1, logits.shape[-1]).tolist()
    out = [_filter_row(r, temperature, top_k, top_p) for r in rows]
    return torch.tensor(out, dtype=logits.dtype, device=logits.device).reshape(logits.shape)


def sample(logits, generator):
    probs = torch.softmax(logits.double(), dim=-1)
    flat = probs.reshape(-1, probs.shape[-1])
    return torch.multinomial(flat, num_samples=1, generator=generator).view(probs.shape[:-1])
