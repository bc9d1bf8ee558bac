import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    s = F.log_softmax(student_logits / temperature, dim=-1)
    t = F.log_softmax(teacher_logits / temperature, dim=-1)
    if mask is not None:
        s, t = s[mask], t[mask]
    if reverse:
        loss = F.kl_div(t, s, reduction="mean", log_target=True)
    else:
        loss = F.kl_div(s, t, reduction="mean", log_target=True)
    return loss * temperature ** 2
