import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_len):
        cands = []
        logp = step_fn(torch.tensor([s for s, _ in beams]))
        for i, (seq, score) in enumerate(beams):
            for tok in range(logp.shape[-1]):
                cands.append((seq + [tok], score + logp[i, tok].item()))
        cands.sort(key=lambda c: c[1], reverse=True)
        beams = []
        for seq, score in cands[:beam_size]:
            (finished if seq[-1] == eos_id else beams).append((seq, score))
        if not beams:
            break
    # normalise by length so that short hypotheses are not favoured
    seq, score = max(finished + beams, key=lambda h: h[1] / (len(h[0]) - 1))
    return seq[1:], score
