import torch


def compute_gae(rewards, values, dones, gamma, lam):
    """Generalised advantage estimation (Schulman et al. 2016) over a rollout, time on dim 0.

    rewards: [T] or [T, n_envs]; values: [T + 1] or [T + 1, n_envs], values[T] the value of the state after the last step
    dones: like rewards, bool or 0/1: dones[t] true when the episode ended at step t (no bootstrap past it)
    delta_t = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
    A_t = delta_t + gamma * lam * (1 - dones[t]) * A_{t + 1}, computed backwards from A_T = 0
    returns: (advantages, returns), both shaped like rewards; returns = advantages + values[:T]
    """
    raise NotImplementedError


def ppo_clip_loss(logp, old_logp, advantages, clip_eps=0.2, mask=None):
    """PPO's clipped surrogate loss (Schulman et al. 2017), per token or per action.

    logp: any shape, log-probs of the taken actions under the current policy (carries the gradient)
    old_logp, advantages: same shape, from the rollout: constants, no gradient may flow into them
    mask: None, or same shape, bool or 0/1: True / 1 for the tokens that count
    ratio = exp(logp - old_logp); objective = min(ratio * A, clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    returns: a 0-dim tensor, -objective averaged over the counted tokens (over all of them when mask is None)
    """
    raise NotImplementedError
