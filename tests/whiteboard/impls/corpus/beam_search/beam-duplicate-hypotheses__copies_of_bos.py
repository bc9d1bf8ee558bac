import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    seqs = torch.full((beam_size, 1), bos_id, dtype=torch.long)
    scores = torch.zeros(beam_size, dtype=torch.float64)
    finished = []
    for _ in range(max_len):
        if seqs.shape[0] == 0:
            break
        logp = step_fn(seqs).double()
        V = logp.shape[-1]
        total = (scores[:, None] + logp).view(-1)
        top = torch.topk(total, min(beam_size, total.numel()))
        rows, toks = top.indices // V, top.indices % V
        new_seqs = torch.cat([seqs[rows], toks[:, None]], dim=1)
        done = toks == eos_id
        for s, sc in zip(new_seqs[done], top.values[done]):
            finished.append((sc.item(), s[1:].tolist()))
        seqs, scores = new_seqs[~done], top.values[~done]
    candidates = finished + [(sc.item(), s[1:].tolist()) for s, sc in zip(seqs, scores)]
    best_score, best_tokens = max(candidates, key=lambda c: c[0])
    return best_tokens, best_score
