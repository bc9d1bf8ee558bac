import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    live = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_len):
        if not live:
            break
        logp = step_fn(torch.tensor([p for p, _ in live]))
        flat = logp.flatten()
        picks = torch.argsort(flat, descending=True)[:beam_size].tolist()  # best next tokens, whatever the prefix
        nxt = []
        for k in picks:
            b, t = divmod(k, logp.shape[1])
            hyp = (live[b][0] + [t], live[b][1] + flat[k].item())
            if t == eos_id:
                finished.append(hyp)
            else:
                nxt.append(hyp)
        live = nxt
    tokens, score = max(finished + live, key=lambda h: h[1])
    return tokens[1:], score
