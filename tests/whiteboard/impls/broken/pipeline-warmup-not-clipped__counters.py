def schedule_1f1b(n_stages, n_microbatches):
    """Megatron-style counters, but num_warmup is never min()-ed with the number of micro-batches."""
    schedule = []
    for rank in range(n_stages):
        num_warmup = n_stages - rank - 1
        num_steady = max(n_microbatches - num_warmup, 0)
        ops, fwd, bwd = [], 0, 0
        for _ in range(num_warmup):
            ops.append(("F", fwd))
            fwd += 1
        for _ in range(num_steady):
            ops.append(("F", fwd))
            fwd += 1
            ops.append(("B", bwd))
            bwd += 1
        while bwd < n_microbatches:
            ops.append(("B", bwd))
            bwd += 1
        schedule.append(ops)
    return schedule
