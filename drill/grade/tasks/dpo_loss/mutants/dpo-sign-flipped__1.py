import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    logits = (ref_chosen_logps - ref_rejected_logps) - (policy_chosen_logps - policy_rejected_logps)  # reversed
    loss = -F.logsigmoid(beta * logits).mean()
    return loss, beta * (policy_chosen_logps - ref_chosen_logps), beta * (policy_rejected_logps - ref_rejected_logps)
