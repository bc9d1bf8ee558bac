"""TRL's DPOTrainer.dpo_loss, sigmoid loss, as written.

Source: https://github.com/huggingface/trl/blob/a68fb896f008f58a3d37abf11ae665357b7c679a/trl/trainer/dpo_trainer.py
(the last version with a dpo_loss method; later ones inline it in _compute_loss).
Adapted: only the default path is kept (f_divergence_type reverse KL, loss_type "sigmoid"; the other loss
types' branches are cut), `self` is a stub trainer (beta from the call, label_smoothing 0, reference_free False,
accelerator.device = the inputs' device); the contract's dpo_loss returns the batch mean of the per-pair losses,
as the trainer's get_batch_loss_metrics does with losses.mean().
"""
from types import SimpleNamespace

import torch
import torch.nn.functional as F


class _DPOTrainerStub:
    def __init__(self, beta, device):
        self.beta = beta
        self.label_smoothing = 0.0
        self.reference_free = False
        self.accelerator = SimpleNamespace(device=device)

    def dpo_loss(
        self,
        chosen_logps: torch.FloatTensor,
        rejected_logps: torch.FloatTensor,
        ref_chosen_logps: torch.FloatTensor,
        ref_rejected_logps: torch.FloatTensor,
        loss_type: str = "sigmoid",
    ) -> tuple[torch.FloatTensor, torch.FloatTensor, torch.FloatTensor]:
        device = self.accelerator.device
        # Get the log ratios for the chosen and rejected responses
        chosen_logratios = chosen_logps.to(device) - (not self.reference_free) * ref_chosen_logps.to(device)
        rejected_logratios = rejected_logps.to(device) - (not self.reference_free) * ref_rejected_logps.to(device)

        logratios = chosen_logps - rejected_logps
        if self.reference_free:
            ref_logratios = torch.tensor([0], dtype=logratios.dtype, device=logratios.device)
        else:
            ref_logratios = ref_chosen_logps - ref_rejected_logps

        logratios = logratios.to(self.accelerator.device)
        ref_logratios = ref_logratios.to(self.accelerator.device)
        logits = logratios - ref_logratios

        # The beta is a temperature parameter for the DPO loss, typically something in the range of 0.1 to 0.5.
        # We ignore the reference model as beta -> 0. The label_smoothing parameter encodes our uncertainty about the
        # labels and calculates a conservative DPO loss.
        if loss_type == "sigmoid":
            losses = (
                -F.logsigmoid(self.beta * logits) * (1 - self.label_smoothing)
                - F.logsigmoid(-self.beta * logits) * self.label_smoothing
            )
        else:
            raise ValueError(f"Unknown loss type: {loss_type}")

        if loss_type != "sft":
            chosen_rewards = self.beta * (chosen_logps.to(device) - ref_chosen_logps.to(device)).detach()
            rejected_rewards = self.beta * (rejected_logps.to(device) - ref_rejected_logps.to(device)).detach()

        return losses, chosen_rewards, rejected_rewards


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    trainer = _DPOTrainerStub(beta, policy_chosen_logps.device)
    losses, chosen_rewards, rejected_rewards = trainer.dpo_loss(
        policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps
    )
    return losses.mean(), chosen_rewards, rejected_rewards
