import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    logits = logits / temperature
    if top_k > 0:
        kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        before = probs.cumsum(dim=-1) - probs  # probability mass strictly before each token
        remove = probs.cumsum(dim=-1) > top_p
        remove[..., 0] = False  # always keep the most probable token
        logits = logits.masked_fill(remove.scatter(-1, order, remove), float("-inf"))
    return logits


def sample(logits, generator):
    probs = torch.softmax(logits, dim=-1)
    flat = probs.reshape(-1, probs.size(-1))
    return torch.multinomial(flat, 1, generator=generator).reshape(probs.shape[:-1])
