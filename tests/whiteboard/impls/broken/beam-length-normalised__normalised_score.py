import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_len):
        logp = step_fn(torch.tensor([s for s, _ in beams]))
        totals = torch.tensor([sc for _, sc in beams], dtype=logp.dtype)[:, None] + logp
        best = totals.flatten().topk(min(beam_size, totals.numel())).indices.tolist()
        survivors = []
        for j in best:
            i, tok = divmod(j, logp.shape[-1])
            hyp = (beams[i][0] + [tok], totals[i, tok].item())
            (finished if tok == eos_id else survivors).append(hyp)
        beams = survivors
        if not beams:
            break
    seq, score = max(((s, sc / (len(s) - 1)) for s, sc in finished + beams), key=lambda h: h[1])
    return seq[1:], score
