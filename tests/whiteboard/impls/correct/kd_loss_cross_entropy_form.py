"""KL as cross-entropy minus entropy: H(p, q) - H(p), with a 0/1 float mask."""

import torch


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    s = student_logits / temperature
    t = teacher_logits / temperature
    log_s = s - torch.logsumexp(s, dim=-1, keepdim=True)
    log_t = t - torch.logsumexp(t, dim=-1, keepdim=True)
    log_p, log_q = (log_s, log_t) if reverse else (log_t, log_s)
    p = log_p.exp()
    cross_entropy = -(p * log_q).sum(-1)
    entropy = -(p * log_p).sum(-1)
    per_token = (cross_entropy - entropy) * temperature * temperature
    weights = torch.ones_like(per_token) if mask is None else mask.to(per_token.dtype)
    return (per_token * weights).sum() / weights.sum()
