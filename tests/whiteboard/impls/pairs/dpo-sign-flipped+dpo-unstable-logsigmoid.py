import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    chosen = policy_chosen_logps - ref_chosen_logps
    rejected = policy_rejected_logps - ref_rejected_logps
    margin = beta * (rejected - chosen)
    loss = -torch.log(torch.sigmoid(margin)).mean()
    return loss, beta * chosen.detach(), beta * rejected.detach()
