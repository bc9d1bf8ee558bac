import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beam = [([bos_id], 0.0)]
    for _ in range(max_len):
        logp = step_fn(torch.tensor([seq for seq, _ in beam], dtype=torch.long))
        cand = []
        for (seq, score), row in zip(beam, logp.tolist()):
            for tok, lp in enumerate(row):
                cand.append((seq + [tok], score + lp))
        cand.sort(key=lambda c: c[1], reverse=True)
        beam = cand[:beam_size]
    seq, score = beam[0]
    return seq[1:], score
