"""TRL's GRPOTrainer: the group-normalised advantages and the clipped loss with the k3 KL, as written.

Source: https://github.com/huggingface/trl/blob/f2cd57710ae345ea6428ae95363267fcf38a3dc8/trl/trainer/grpo_trainer.py
(_generate_and_score_completions, _compute_loss) and trl/trainer/utils.py (nanstd).
Adapted: the settings the contract fixes are taken as constants: one reward function (weight 1), scale_rewards
"group", importance_sampling_level "token", epsilon_low = epsilon_high = clip_eps, delta None, no entropy or
off-policy masks, no vLLM correction, and loss_type "bnpo" (the mean over all valid tokens of the batch; TRL's
"grpo" averages each sequence first); the log-probs come as arguments instead of from a model; [B, G, L]
inputs are viewed as [B*G, L], the layout TRL uses. Logging, gradient-accumulation scaling and
multi-process slicing are left out.
Precision: TRL's nanstd computes Bessel's factor as count / (count - 1) from int64 counts, which torch divides
in the default dtype (float32), so float64 advantages carry one float32 rounding (4/3 off by 4e-8). drill's
float64 check judges it at float32 and says so in a note, as the issue on real code asks.
"""
import torch


def nanstd(tensor, dim=None, keepdim=False):
    # Compute variance ignoring NaNs
    mean = torch.nanmean(tensor, dim=dim, keepdim=True)
    variance = torch.nanmean((tensor - mean) ** 2, dim=dim, keepdim=True)
    count = torch.sum(~torch.isnan(tensor), dim=dim, keepdim=True)  # count of non-NaN values
    correction = count / (count - 1)
    correction = torch.where(count > 1, correction, torch.full_like(correction, float("nan")))
    variance *= correction  # Bessel's correction
    std = torch.sqrt(variance)
    if keepdim:
        return std
    if dim is None:
        return std.squeeze()
    if isinstance(dim, int):
        return std.squeeze(dim)
    return std


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    num_generations = rewards.shape[1]
    rewards = rewards.reshape(-1)
    L = logps.shape[-1]
    per_token_logps, old_per_token_logps, ref_per_token_logps = (t.reshape(-1, L) for t in (logps, old_logps, ref_logps))
    mask = mask.reshape(-1, L)
    epsilon_low = epsilon_high = clip_eps

    # _generate_and_score_completions, sum_then_normalize with scale_rewards == "group"
    mean_grouped_rewards = torch.nanmean(rewards.view(-1, num_generations), dim=1)
    mean_grouped_rewards = mean_grouped_rewards.repeat_interleave(num_generations, dim=0)
    std_rewards = nanstd(rewards.view(-1, num_generations), dim=1)
    std_rewards = std_rewards.repeat_interleave(num_generations, dim=0)
    advantages = rewards - mean_grouped_rewards
    advantages = advantages / (std_rewards + 1e-4)
    advantages = torch.nan_to_num(advantages, nan=0.0)

    # _compute_loss
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    log_ratio = per_token_logps - old_per_token_logps
    log_importance_weights = log_ratio
    coef_1 = torch.exp(log_importance_weights)

    # Compute the KL divergence between the model and the reference model
    if beta != 0.0:
        per_token_kl = (
            torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
        )

    coef_2 = torch.clamp(coef_1, 1 - epsilon_low, 1 + epsilon_high)
    per_token_loss1 = coef_1 * advantages
    per_token_loss2 = coef_2 * advantages
    per_token_loss = -torch.min(per_token_loss1, per_token_loss2)

    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl

    loss = (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
    return loss
