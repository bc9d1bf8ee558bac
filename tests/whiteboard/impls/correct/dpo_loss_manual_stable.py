import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """A stable log-sigmoid by hand: log σ(z) = min(z, 0) - log1p(exp(-|z|))."""
    z = beta * ((policy_chosen_logps - ref_chosen_logps) - (policy_rejected_logps - ref_rejected_logps))
    log_sigmoid = torch.clamp(z, max=0) - torch.log1p(torch.exp(-z.abs()))
    return -log_sigmoid.mean(), beta * (policy_chosen_logps - ref_chosen_logps), beta * (policy_rejected_logps - ref_rejected_logps)
