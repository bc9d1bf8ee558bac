import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    """Beam search without a length penalty.

    step_fn(prefixes) -> log_probs: prefixes int64 [N, t] (N hypotheses, each starting with bos_id),
    log_probs [N, V], the next-token log-probabilities of each prefix.
    Start from the single hypothesis [bos_id] with score 0. At each of at most max_len steps, extend
    every live hypothesis by every token and keep the beam_size best extensions by total log-prob;
    those ending in eos_id are finished and leave the beam (it shrinks). Stop after max_len steps or
    when no hypothesis is live.
    returns: (tokens, score) of the best finished or still-live hypothesis: tokens a list of ints
    without bos_id (ending with eos_id if it finished), score its total log-prob (a float).
    """
    raise NotImplementedError
