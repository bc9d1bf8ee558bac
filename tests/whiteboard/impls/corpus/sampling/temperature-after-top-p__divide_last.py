import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    out = logits.clone()
    if top_k > 0:
        kth = torch.topk(out, min(top_k, out.shape[-1]), dim=-1).values[..., -1:]
        out = out.masked_fill(out < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(out, dim=-1, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        cum = torch.cumsum(probs, dim=-1)
        remove = cum - probs >= top_p
        remove[..., 0] = False
        sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
        out = torch.empty_like(out).scatter(-1, order, sorted_logits)
    return out / temperature


def sample(logits, generator):
    probs = torch.softmax(logits, dim=-1)
    flat = probs.reshape(-1, probs.shape[-1])
    ids = torch.multinomial(flat, 1, generator=generator)
    return ids.view(probs.shape[:-1])
