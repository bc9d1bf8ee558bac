import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    logits.div_(temperature)
    if top_k > 0:
        kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[..., -1:]
        logits.masked_fill_(logits < kth, float("-inf"))
    if top_p < 1.0:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        remove = probs.cumsum(dim=-1) - probs >= top_p
        remove[..., 0] = False
        logits.masked_fill_(remove.scatter(-1, order, remove), float("-inf"))
    return logits


def sample(logits, generator):
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).reshape(probs.shape[:-1])
