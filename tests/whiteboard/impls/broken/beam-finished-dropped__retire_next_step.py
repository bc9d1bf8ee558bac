import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_len):
        # retire the hypotheses that ended in eos on the previous step
        finished += [(s, sc) for s, sc in beams if s[-1] == eos_id]
        beams = [(s, sc) for s, sc in beams if s[-1] != eos_id]
        if not beams:
            break
        logp = step_fn(torch.tensor([s for s, _ in beams]))
        totals = torch.tensor([sc for _, sc in beams], dtype=logp.dtype)[:, None] + logp
        best = totals.flatten().topk(min(beam_size, totals.numel())).indices.tolist()
        beams = [(beams[j // logp.shape[-1]][0] + [j % logp.shape[-1]], totals.flatten()[j].item()) for j in best]
    live = [(s, sc) for s, sc in beams if s[-1] != eos_id]
    seq, score = max(finished + live, key=lambda h: h[1])
    return seq[1:], score
