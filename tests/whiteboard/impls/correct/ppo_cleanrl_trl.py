import torch


def compute_gae(rewards, values, dones, gamma, lam):
    """CleanRL's loop (nextnonterminal, nextvalues, lastgaelam), with this contract's dones: the episode ended at t."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(rewards.shape[0])):
        nextnonterminal = 1.0 - dones[t].to(rewards.dtype)
        nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    returns = advantages + values[:-1]
    return advantages, returns


def masked_mean(values, mask):
    return (values * mask).sum() / mask.sum()


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    """TRL's PPO trainer's form: the max of the two negated surrogates, then a masked mean."""
    logprobs_diff = logp - old_logp.detach()
    ratio = torch.exp(logprobs_diff)
    pg_losses = -advantages.detach() * ratio
    pg_losses2 = -advantages.detach() * torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    pg_loss_max = torch.max(pg_losses, pg_losses2)
    if mask is None:
        return pg_loss_max.mean()
    return masked_mean(pg_loss_max, mask.to(pg_loss_max.dtype))
