import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beam = [(0.0, [bos_id])]
    done = []
    for _ in range(max_len):
        logp = step_fn(torch.tensor([seq for _, seq in beam]))
        options = []
        for row, (score, seq) in enumerate(beam):
            for tok in range(logp.shape[1]):
                options.append((score + logp[row, tok].item(), seq + [tok]))
        options.sort(key=lambda o: -o[0])
        beam = options[:beam_size]
        done += [o for o in beam if o[1][-1] == eos_id]  # remembered as finished, but left in the beam
    best = max(done + beam, key=lambda o: o[0])
    return best[1][1:], best[0]
