import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    seqs = [[bos_id]]
    scores = torch.zeros(1)  # float32
    finished = []
    for _ in range(max_len):
        logp = step_fn(torch.tensor(seqs)).float()
        total = scores[:, None] + logp
        vals, idx = total.flatten().topk(min(beam_size, total.numel()))
        V = logp.shape[-1]
        keep_s, keep_v = [], []
        for v, j in zip(vals, idx.tolist()):
            seq = seqs[j // V] + [j % V]
            if j % V == eos_id:
                finished.append((seq, v))
            else:
                keep_s.append(seq)
                keep_v.append(v)
        if not keep_s:
            seqs = []
            break
        seqs, scores = keep_s, torch.stack(keep_v)
    pool = finished + list(zip(seqs, scores))
    seq, score = max(pool, key=lambda h: h[1].item())
    return seq[1:], score
