import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    # a fixed-size beam: finished rows stay in the batch at -inf so they are never picked again
    seqs = torch.full((1, 1), bos_id, dtype=torch.long)
    scores = torch.zeros(1, dtype=torch.float64)
    best_tokens, best_score = None, float("-inf")
    for _ in range(max_len):
        if torch.isinf(scores).all():
            break
        logp = step_fn(seqs).double()
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        vals, idx = cand.topk(min(beam_size, cand.numel()))
        seqs = torch.cat([seqs[idx // V], (idx % V)[:, None]], dim=1)
        ended = (idx % V) == eos_id
        for s, v in zip(seqs[ended & torch.isfinite(vals)], vals[ended & torch.isfinite(vals)]):
            if v.item() > best_score:
                best_tokens, best_score = s[1:].tolist(), v.item()
        scores = vals.masked_fill(ended, float("-inf"))
    for s, v in zip(seqs, scores):
        if torch.isfinite(v) and v.item() > best_score:
            best_tokens, best_score = s[1:].tolist(), v.item()
    return best_tokens, best_score
