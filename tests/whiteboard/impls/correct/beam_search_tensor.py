import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    """The beam as tensors: prefixes [N, t] and scores [N]; finished hypotheses kept aside."""
    prefixes = torch.full((1, 1), bos_id, dtype=torch.long)
    scores = torch.zeros(1, dtype=torch.float64)
    best_tokens, best_score = None, float("-inf")
    for _ in range(max_len):
        if prefixes.shape[0] == 0:
            break
        logp = step_fn(prefixes)
        vocab = logp.shape[-1]
        totals = (scores[:, None] + logp).reshape(-1)
        top, index = totals.topk(min(beam_size, totals.numel()))
        rows, tokens = index // vocab, index % vocab
        extended = torch.cat([prefixes[rows], tokens[:, None]], dim=1)
        ended = tokens == eos_id
        if ended.any():
            j = int(top[ended].argmax())
            if top[ended][j].item() > best_score:
                best_score, best_tokens = top[ended][j].item(), extended[ended][j]
        prefixes, scores = extended[~ended], top[~ended]
    if prefixes.shape[0] and scores.max().item() > best_score:
        j = int(scores.argmax())
        best_score, best_tokens = scores[j].item(), prefixes[j]
    return best_tokens[1:].tolist(), best_score
