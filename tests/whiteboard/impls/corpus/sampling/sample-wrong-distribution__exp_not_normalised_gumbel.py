import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    out = logits / temperature
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
    return out


def sample(logits, generator):
    probs = logits
    flat = probs.reshape(-1, probs.shape[-1])
    u = torch.rand(flat.shape, generator=generator, device=flat.device)
    ids = (flat + u).argmax(dim=-1, keepdim=True)
    return ids.view(probs.shape[:-1])
