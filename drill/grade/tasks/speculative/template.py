import torch


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    """The verification step of speculative sampling, its randomness given as uniforms.

    draft_tokens: int64 [gamma]        the draft model's proposals x_0 .. x_{gamma-1}
    draft_probs:  [gamma, V]           q_i, the draft distribution each x_i was drawn from
    target_probs: [gamma + 1, V]       p_i, the target model's distribution at each position
    uniforms:     [gamma + 1]          values in [0, 1), one per decision
    For i = 0, 1, ...: accept x_i when uniforms[i] < min(1, p_i(x_i) / q_i(x_i)). At the first
    rejection, draw one token from norm(max(0, p_i - q_i)) with uniforms[i + 1] and stop. If all
    gamma are accepted, add a bonus token drawn from p_gamma with uniforms[gamma]. Every draw is by
    inverse CDF: the first index whose cumulative probability exceeds the uniform.
    returns: int64 [n] with 1 <= n <= gamma + 1, the emitted tokens (do not modify the inputs)
    """
    raise NotImplementedError
