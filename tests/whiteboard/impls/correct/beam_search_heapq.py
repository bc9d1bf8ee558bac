import heapq

import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    """Plain Python: heapq.nlargest over (score, beam, token) candidates."""
    live = [(0.0, (bos_id,))]
    done = []
    for _ in range(max_len):
        if not live:
            break
        logp = step_fn(torch.tensor([list(seq) for _, seq in live], dtype=torch.long)).tolist()
        candidates = ((score + lp, seq + (tok,)) for (score, seq), row in zip(live, logp) for tok, lp in enumerate(row))
        best = heapq.nlargest(beam_size, candidates, key=lambda c: c[0])
        done += [c for c in best if c[1][-1] == eos_id]
        live = [c for c in best if c[1][-1] != eos_id]
    score, seq = max(done + live, key=lambda c: c[0])
    return list(seq[1:]), score
