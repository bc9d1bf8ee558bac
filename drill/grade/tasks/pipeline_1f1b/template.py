def schedule_1f1b(n_stages, n_microbatches):
    """The one-forward-one-backward (1F1B) pipeline schedule, per stage. Plain Python, no torch.

    n_stages p >= 1, n_microbatches m >= 1 (m may be smaller than p); stages and micro-batches from 0.
    returns a list of p lists; list s is stage s's sequence of ('F', i) and ('B', i), every micro-batch
    i in 0..m-1 forwarded and backwarded exactly once on every stage.
    Dependencies (checked by simulation): ('F', i) on stage s after ('F', i) on stage s - 1; ('B', i) on
    stage s after ('F', i) on stage s and ('B', i) on stage s + 1.
    1F1B: a warm-up of forwards, then alternate one forward and one backward, then the remaining
    backwards: at most p - s activations in flight on stage s, and the bubble (p - 1) / (m + p - 1).
    """
    raise NotImplementedError
