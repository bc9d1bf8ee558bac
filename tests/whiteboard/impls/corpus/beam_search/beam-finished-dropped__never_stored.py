import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    seqs = torch.tensor([[bos_id]], dtype=torch.long)
    scores = torch.zeros(1, dtype=torch.float64)
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
            pass
        seqs, scores = new_seqs[~done], top.values[~done]
    candidates = finished + [(sc.item(), s[1:].tolist()) for s, sc in zip(seqs, scores)]
    best_score, best_tokens = max(candidates, key=lambda c: c[0])
    return best_tokens, best_score
