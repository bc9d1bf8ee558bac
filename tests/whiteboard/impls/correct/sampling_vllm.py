"""vLLM's PyTorch-native top-k / top-p filter and its exponential-race sampler (v1 engine), as written.

Source: https://github.com/vllm-project/vllm/blob/01fa3fe74b058bb604f236341ab2361c7cf3d25b/vllm/v1/sample/ops/topk_topp_sampler.py
(apply_top_k_top_p_pytorch, sample_with_exponential_noise, random_sample) and vllm/v1/sample/sampler.py
(temperature: logits divided by the per-request temperature before the filter).
Adapted: vLLM filters its own logits buffer in place, the contract forbids touching the caller's, so
filter_logits works on a copy (divided by the temperature), viewed as [rows, V] (the function gathers along
dim 1); top_k = 0 / top_p = 1 are "off", passed as k / p = None, and a top_k above the vocabulary is cut to
it, as vLLM's input batch does before calling the filter (which gathers at V - k); k and p become per-row
tensors. sample draws every row's noise from the contract's generator (vLLM's per-request generators).
The CPU-sync top-k-only shortcut (apply_top_k_only, used only when allow_cpu_sync) is not taken.
"""
import torch


def apply_top_k_top_p_pytorch(
    logits: torch.Tensor,
    k: torch.Tensor | None,
    p: torch.Tensor | None,
) -> torch.Tensor:
    if p is None:
        if k is None:
            return logits

    logits_sort, logits_idx = logits.sort(dim=-1, descending=False)

    if k is not None:
        # Apply top-k.
        top_k_mask = logits_sort.size(1) - k.to(torch.long)  # shape: B
        # Get all the top_k values.
        top_k_mask = logits_sort.gather(1, top_k_mask.unsqueeze(dim=1))
        top_k_mask = logits_sort < top_k_mask
        logits_sort.masked_fill_(top_k_mask, -float("inf"))

    if p is not None:
        # Apply top-p.
        probs_sort = logits_sort.softmax(dim=-1)
        probs_sum = torch.cumsum(probs_sort, dim=-1, out=probs_sort)
        top_p_mask = probs_sum <= 1 - p.unsqueeze(dim=1)
        # at least one
        top_p_mask[:, -1] = False
        logits_sort.masked_fill_(top_p_mask, -float("inf"))

    # Re-sort the probabilities.
    return logits.scatter_(dim=-1, index=logits_idx, src=logits_sort)


def sample_with_exponential_noise(probs: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    if q.dtype == probs.dtype:
        scores = probs.div_(q)
    else:
        scores = q.reciprocal_()
        scores.mul_(probs)
    return scores.argmax(dim=-1).view(-1)


def random_sample(probs, generators):
    q = torch.empty_like(probs)
    # NOTE(woosuk): To batch-process the requests without their own seeds,
    # which is the common case, we first assume that every request does
    # not have its own seed. Then, we overwrite the values for the requests
    # that have their own seeds.
    if len(generators) != probs.shape[0]:
        q.exponential_()
    if generators:
        # TODO(woosuk): This can be slow because we handle each request
        # one by one. Optimize this.
        for i, generator in generators.items():
            q[i].exponential_(generator=generator)
    return sample_with_exponential_noise(probs, q)


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    rows = logits.reshape(-1, logits.shape[-1]) / temperature
    n = rows.shape[0]
    k = torch.full((n,), min(top_k, rows.shape[-1]), dtype=torch.long, device=rows.device) if top_k > 0 else None
    p = torch.full((n,), top_p, dtype=rows.dtype, device=rows.device) if top_p < 1.0 else None
    return apply_top_k_top_p_pytorch(rows, k, p).view(logits.shape)


def sample(logits, generator):
    rows = logits.reshape(-1, logits.shape[-1])
    probs = rows.softmax(dim=-1, dtype=torch.float32)
    ids = random_sample(probs, {i: generator for i in range(rows.shape[0])})
    return ids.view(logits.shape[:-1])
