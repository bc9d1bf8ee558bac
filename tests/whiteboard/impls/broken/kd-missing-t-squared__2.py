"""The KL part of TRL's GKD generalized_jsd_loss (beta = 0: KL(teacher || student)): softened by T, but no T²."""

import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    student_log_probs = F.log_softmax(student_logits / temperature, dim=-1)
    teacher_log_probs = F.log_softmax(teacher_logits / temperature, dim=-1)
    if reverse:
        jsd = F.kl_div(teacher_log_probs, student_log_probs, reduction="none", log_target=True)
    else:
        jsd = F.kl_div(student_log_probs, teacher_log_probs, reduction="none", log_target=True)
    if mask is not None:
        return jsd[mask].sum() / mask.sum()
    return jsd.sum() / jsd[..., 0].numel()
