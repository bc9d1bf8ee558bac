import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    out = logits.clone()
    if top_k > 0:
        k = min(top_k, out.shape[0])
        kth = torch.topk(out, k, dim=0).values[-1:]
        out[out < kth] = float("-inf")
    if top_p < 1.0:
        p = torch.softmax(out, dim=-1)
        sp, idx = p.sort(dim=-1, descending=True)
        cum = sp.cumsum(-1)
        drop = cum - sp >= top_p
        drop[..., 0] = False
        out[torch.zeros_like(drop).scatter(-1, idx, drop)] = float("-inf")
    return out / temperature


def sample(logits, generator):
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1, generator=generator).view(probs.shape[:-1])
