"""F.kl_div with log targets (KL(target || input)), the counted tokens picked out by boolean indexing."""

import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    log_s = F.log_softmax(student_logits / temperature, dim=-1)
    log_t = F.log_softmax(teacher_logits / temperature, dim=-1)
    if reverse:
        kl = F.kl_div(log_t, log_s, reduction="none", log_target=True)  # KL(student || teacher)
    else:
        kl = F.kl_div(log_s, log_t, reduction="none", log_target=True)  # KL(teacher || student)
    per_token = kl.sum(dim=-1)
    if mask is not None:
        per_token = per_token[mask]
    return per_token.mean() * temperature**2
