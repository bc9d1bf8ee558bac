import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    hyps, scores = [[bos_id]], torch.zeros(1, dtype=torch.float64)
    complete = []
    for t in range(max_len):
        logp = step_fn(torch.tensor(hyps))
        total = (scores[:, None] + logp).flatten()
        k = min(beam_size, total.numel())
        vals, idx = total.topk(k)
        V = logp.shape[1]
        new_hyps, new_scores = [], []
        for v, j in zip(vals.tolist(), idx.tolist()):
            seq = hyps[j // V] + [j % V]
            if j % V == eos_id:
                if t < max_len - 1:  # a hypothesis cut off at max_len is not a complete one
                    complete.append((seq, v))
            else:
                new_hyps.append(seq)
                new_scores.append(v)
        if not new_hyps:
            break
        hyps, scores = new_hyps, torch.tensor(new_scores, dtype=torch.float64)
    pool = complete + list(zip(hyps, scores.tolist())) if new_hyps else complete
    if not pool:
        return [], float("-inf")
    seq, score = max(pool, key=lambda h: h[1])
    return seq[1:], score
