import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    hyps = [[bos_id] for _ in range(beam_size)]
    scores = [0.0] * beam_size
    for _ in range(max_len):
        if not hyps:
            break
        logp = step_fn(torch.tensor(hyps)).tolist()
        cands = sorted(((s + lp, h + [t]) for h, s, row in zip(hyps, scores, logp) for t, lp in enumerate(row)), reverse=True)
        cands = [c for c in cands[:beam_size] if c[1][-1] != eos_id]  # eos: the hypothesis is over
        hyps, scores = [h for _, h in cands], [s for s, _ in cands]
    i = scores.index(max(scores))
    return hyps[i][1:], scores[i]
