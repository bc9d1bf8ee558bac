import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    log_s = F.log_softmax(student_logits / temperature, dim=-1)
    log_t = F.log_softmax(teacher_logits / temperature, dim=-1)
    if reverse:
        per_token = (log_s.exp() * (log_s - log_t)).sum(-1)
    else:
        per_token = (log_t.exp() * (log_t - log_s)).sum(-1)
    per_token = per_token * temperature**2
    if mask is None:
        return per_token.mean()
    mask = mask.to(per_token.dtype)
    return (per_token * mask).sum() / mask.sum()
