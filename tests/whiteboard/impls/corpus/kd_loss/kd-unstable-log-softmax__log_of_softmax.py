import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    T = temperature
    log_s = torch.log(torch.softmax(student_logits / T, dim=-1))
    log_t = torch.log(torch.softmax(teacher_logits / T, dim=-1))
    if reverse:
        kl = (log_s.exp() * (log_s - log_t)).sum(-1)
    else:
        kl = (log_t.exp() * (log_t - log_s)).sum(-1)
    kl = kl * T ** 2
    if mask is None:
        return kl.mean()
    m = mask.to(kl.dtype)
    return (kl * m).sum() / m.sum()
