import torch
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """The DPO loss (Rafailov et al. 2023) of a batch of preference pairs.

    each input: [B], the summed log-probability of a whole response (chosen or rejected) under the
    policy being trained or under the frozen reference model
    returns (loss, chosen_rewards, rejected_rewards):
        loss: a 0-dim tensor, the batch mean of -log sigmoid(beta * (policy log-ratio - reference log-ratio)),
              a log-ratio being chosen_logps - rejected_logps
        chosen_rewards:   [B], beta * (policy_chosen_logps - ref_chosen_logps)
        rejected_rewards: [B], beta * (policy_rejected_logps - ref_rejected_logps)
    Stable for any margin (a margin of -300 must give a loss of about 300, not inf).
    Rules: do not modify the inputs.
    """
    raise NotImplementedError
