import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len, alpha=0.6):
    beams = [([bos_id], 0.0)]
    done = []
    for _ in range(max_len):
        logp = step_fn(torch.tensor([s for s, _ in beams]))
        scores = torch.tensor([s for _, s in beams], dtype=logp.dtype)[:, None] + logp
        top = scores.flatten().topk(min(beam_size, scores.numel()))
        nxt = []
        for val, idx in zip(top.values.tolist(), top.indices.tolist()):
            i, tok = divmod(idx, logp.shape[-1])
            hyp = (beams[i][0] + [tok], val)
            (done if tok == eos_id else nxt).append(hyp)
        beams = nxt
        if not beams:
            break
    pool = done + beams
    lp = lambda n: ((5 + n) / 6) ** alpha
    seq, score = max(pool, key=lambda h: h[1] / lp(len(h[0]) - 1))
    return seq[1:], score
