import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_len):
        if not beams:
            break
        logp = step_fn(torch.tensor([seq for seq, _ in beams]))  # [N, V]
        totals = torch.tensor([score for _, score in beams], dtype=logp.dtype)[:, None] + logp
        best = torch.topk(totals.flatten(), min(beam_size, totals.numel())).indices.tolist()
        vocab = logp.shape[-1]
        survivors = []
        for index in best:
            i, token = divmod(index, vocab)
            hyp = (beams[i][0] + [token], totals[i, token].item())
            (finished if token == eos_id else survivors).append(hyp)
        beams = survivors
    seq, score = max(finished + beams, key=lambda h: h[1] / (len(h[0]) - 1))  # length-normalised
    return seq[1:], score
