import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    log_s = F.log_softmax(student_logits / temperature, dim=-1)
    log_t = F.log_softmax(teacher_logits / temperature, dim=-1)
    if reverse:
        kl = F.kl_div(log_t, log_s, log_target=True, reduction="none")
    else:
        kl = F.kl_div(log_s, log_t, log_target=True, reduction="none")
    if mask is not None:
        kl = kl[mask]
    return kl.mean() * temperature**2  # reduction="mean": divided by the vocabulary size too
