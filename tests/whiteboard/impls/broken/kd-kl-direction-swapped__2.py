"""The reverse flag read but never used: always the forward KL, written as cross-entropy minus entropy."""

import torch


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    p_t = torch.softmax(teacher_logits / temperature, dim=-1)
    log_p_s = torch.log_softmax(student_logits / temperature, dim=-1)
    log_p_t = torch.log_softmax(teacher_logits / temperature, dim=-1)
    per_token = (p_t * log_p_t).sum(-1) - (p_t * log_p_s).sum(-1)
    per_token = per_token * temperature**2
    if mask is None:
        mask = torch.ones_like(per_token, dtype=torch.bool)
    return per_token[mask].mean()
