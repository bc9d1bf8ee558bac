"""Real public code graded by the group-C tasks, through thin adapters: what passes as-is, and what does not and why.

The code is copied verbatim (function bodies unchanged) from the named release, since installing the libraries
that hold it would pull in far more than these functions: the adapter is only the task's signature around it.
"""

from __future__ import annotations

import pytest

from drill.grade.battery import run_battery

pytest.importorskip("torch")

# transformers 5.24.0, src/transformers/loss/loss_utils.py (Apache-2.0): fixed_cross_entropy and ForCausalLMLoss, verbatim.
HF_CAUSAL_LM_LOSS = '''import torch
import torch.nn as nn


def fixed_cross_entropy(
    source: torch.Tensor,
    target: torch.Tensor,
    num_items_in_batch: torch.Tensor | None = None,
    ignore_index: int = -100,
    **kwargs,
) -> torch.Tensor:
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
    if reduction == "sum":
        # just in case users pass an int for num_items_in_batch, which could be the case for custom trainer
        if torch.is_tensor(num_items_in_batch):
            num_items_in_batch = num_items_in_batch.to(loss.device)
        loss = loss / num_items_in_batch
    return loss


def ForCausalLMLoss(
    logits,
    labels,
    vocab_size: int,
    num_items_in_batch: torch.Tensor | None = None,
    ignore_index: int = -100,
    shift_labels: torch.Tensor | None = None,
    **kwargs,
) -> torch.Tensor:
    # Upcast to float if we need to compute the loss to avoid potential precision issues
    logits = logits.float()

    if shift_labels is None:
        # Shift so that tokens < n predict n
        labels = nn.functional.pad(labels, (0, 1), value=ignore_index)
        shift_labels = labels[..., 1:].contiguous()

    # Flatten the tokens
    logits = logits.view(-1, vocab_size)
    shift_labels = shift_labels.view(-1)
    shift_labels = shift_labels.to(logits.device)
    loss = fixed_cross_entropy(logits, shift_labels, num_items_in_batch, ignore_index, **kwargs)
    return loss
'''

SFT_ADAPTER = '''

def sft_loss(logits, labels, num_items_in_batch=None):
    return ForCausalLMLoss(logits, labels, logits.shape[-1], num_items_in_batch)


def build_labels(input_ids, prompt_lens, pad_id):  # not part of transformers: the task's second entry, written plainly
    positions = torch.arange(input_ids.shape[1])[None, :]
    prompt = positions < torch.as_tensor(prompt_lens)[:, None]
    return input_ids.masked_fill(prompt | (input_ids == pad_id), -100)
'''


def failing(report):
    return {c.id for c in report.checks if c.status in ("fail", "error")}


def test_hugging_face_causal_lm_loss_passes_all_but_float64(tmp_path):
    """ForCausalLMLoss upcasts to float32 by design, so the float64 run is float32-accurate only: every other check passes."""
    path = tmp_path / "hf_for_causal_lm_loss.py"
    path.write_text(HF_CAUSAL_LM_LOSS + SFT_ADAPTER)
    report = run_battery(path, task="sft_loss")
    assert failing(report) == {"numerical.float64"}, [(c.id, c.message) for c in report.checks if c.status == "fail"]
    assert report.diagnosis == []


def test_hugging_face_causal_lm_loss_passes_with_float32_upcast_removed(tmp_path):
    """The same code without its upcast (the one line the float64 check objects to) passes every check."""
    path = tmp_path / "hf_for_causal_lm_loss_no_upcast.py"
    path.write_text((HF_CAUSAL_LM_LOSS + SFT_ADAPTER).replace("    logits = logits.float()\n", ""))
    report = run_battery(path, task="sft_loss")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status == "fail"]


# TRL's PPOTrainer.loss (trl/trainer/ppo_trainer.py, v0.4 to v0.11, Apache-2.0): the policy-loss lines verbatim, with
# trl.core.masked_mean. Its GAE loop has no dones (one episode per row, bootstrap 0 after the last token), so it
# cannot implement compute_gae's contract; the adapter's compute_gae is the task's formula, written plainly.
TRL_PPO_POLICY_LOSS = '''import torch


def masked_mean(values, mask, axis=None):
    """Compute mean of tensor with a masked values."""
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    else:
        return (values * mask).sum() / mask.sum()


def trl_policy_loss(logprobs, old_logprobs, advantages, mask, cliprange):
        ratio = torch.exp(logprobs - old_logprobs)
        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange)

        pg_loss = masked_mean(torch.max(pg_losses, pg_losses2), mask)
        return pg_loss
'''

PPO_ADAPTER = '''

def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    # TRL computes old_logprobs under torch.no_grad() and detaches the advantages before this point: so does the adapter
    mask = torch.ones_like(logp) if mask is None else mask.to(logp.dtype)
    return trl_policy_loss(logp, old_logp.detach(), advantages.detach(), mask, clip_eps)


def compute_gae(rewards, values, dones, gamma, lam):
    not_done = 1.0 - dones.to(rewards.dtype)
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in reversed(range(rewards.shape[0])):
        last = rewards[t] + gamma * values[t + 1] * not_done[t] - values[t] + gamma * lam * not_done[t] * last
        advantages[t] = last
    return advantages, advantages + values[:-1]
'''


def test_trl_ppo_policy_loss_passes(tmp_path):
    path = tmp_path / "trl_ppo_policy_loss.py"
    path.write_text(TRL_PPO_POLICY_LOSS + PPO_ADAPTER)
    report = run_battery(path, task="ppo")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status == "fail"]


def test_trl_ppo_policy_loss_without_the_callers_detach_is_named(tmp_path):
    """Called on old_logprobs that still carry a graph (outside TRL's no_grad rollout), it trains through them."""
    path = tmp_path / "trl_ppo_policy_loss_no_detach.py"
    path.write_text((TRL_PPO_POLICY_LOSS + PPO_ADAPTER).replace("old_logp.detach(), advantages.detach()", "old_logp, advantages"))
    report = run_battery(path, task="ppo")
    assert failing(report) == {"gradient.detached"}
    assert [d.code for d in report.diagnosis] == ["ppo-advantages-not-detached"]


# TRL 1.16.0, GRPOTrainer._compute_loss (trl/trainer/grpo_trainer.py, Apache-2.0): the lines that build the ratio,
# the clipped loss and the "grpo" / "dapo" reductions, verbatim but for `self.` attributes made parameters (no KL:
# beta = 0, no delta, one process, no accumulation: normalizer = num_items_in_batch, the group's valid tokens).
TRL_GRPO_LOSS = '''import torch


def trl_loss(per_token_logps, old_per_token_logps, advantages, mask, importance_sampling_level, loss_type,
             epsilon_low, epsilon_high, num_items_in_batch):
        if advantages.dim() == 1:
            advantages = advantages.unsqueeze(1)
        log_ratio = per_token_logps - old_per_token_logps
        if importance_sampling_level == "token":
            log_importance_weights = log_ratio
        elif importance_sampling_level == "sequence":
            log_importance_weights = (log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
            log_importance_weights = log_importance_weights.unsqueeze(-1)
        coef_1 = torch.exp(log_importance_weights)
        coef_2 = torch.clamp(coef_1, 1 - epsilon_low, 1 + epsilon_high)
        per_token_loss1 = coef_1 * advantages
        per_token_loss2 = coef_2 * advantages
        per_token_loss = -torch.min(per_token_loss1, per_token_loss2)
        if loss_type in ["grpo", "sapo"]:
            loss = ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
        elif loss_type in ["cispo", "dapo", "vespo"]:
            normalizer = num_items_in_batch.clamp(min=1.0)
            loss = (per_token_loss * mask).sum() / normalizer
        return loss
'''

GRPO_SUCCESSORS_ADAPTER = '''

def dapo_loss(logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.28):
    mask = mask.to(logp.dtype)  # TRL's completion_mask is 0/1 ints; its rollout tensors carry no graph
    return trl_loss(logp, old_logp.detach(), advantages.detach(), mask, "token", "dapo", eps_low, eps_high, mask.sum())


def gspo_loss(logp, old_logp, advantages, mask, eps):
    mask = mask.to(logp.dtype)  # GSPO in TRL: importance_sampling_level="sequence" with loss_type="grpo"
    return trl_loss(logp, old_logp.detach(), advantages.detach(), mask, "sequence", "grpo", eps, eps, mask.sum())
'''


def test_trl_dapo_and_gspo_losses_pass(tmp_path):
    path = tmp_path / "trl_grpo_trainer_loss.py"
    path.write_text(TRL_GRPO_LOSS + GRPO_SUCCESSORS_ADAPTER)
    report = run_battery(path, task="grpo_successors")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status == "fail"]


def test_trl_dapo_with_the_grpo_reduction_is_a_sample_mean(tmp_path):
    """TRL's default loss_type="grpo" with the token-level ratio is the per-completion mean DAPO replaced."""
    path = tmp_path / "trl_grpo_reduction.py"
    path.write_text((TRL_GRPO_LOSS + GRPO_SUCCESSORS_ADAPTER).replace('"token", "dapo"', '"token", "grpo"'))
    report = run_battery(path, task="grpo_successors")
    assert [d.code for d in report.diagnosis] == ["dapo-sample-mean"]
