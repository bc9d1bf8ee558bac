import torch
import torch.nn.functional as F


def kd_loss(student_logits, teacher_logits, temperature=1.0, reverse=False, mask=None):
    """The knowledge-distillation loss between a student's and a teacher's next-token distributions.

    student_logits, teacher_logits: [..., V] (e.g. [B, T, V] or [N, V]), same shape
    temperature: T; both sets of logits are divided by T before the softmax
    reverse: False: forward KL(p_teacher || p_student) (classic distillation);
             True: reverse KL(p_student || p_teacher) (on-policy distillation)
    mask: None, or bool [...] (the logits' leading dims): True = the token counts
    returns: a 0-d tensor in the logits' dtype: the per-token KL (summed over V) times T**2,
             averaged over the counted tokens (every token when mask is None).
    Stable for logits of a few hundred. Rules: do not modify the inputs.
    """
    raise NotImplementedError
