def schedule_1f1b(n_stages, n_microbatches):
    schedule = []
    for s in range(n_stages):
        warmup = min(n_stages - s - 1, n_microbatches)
        ops = [("F", i) for i in range(warmup)]
        for i in range(n_microbatches - warmup):
            ops += [("B", i), ("F", warmup + i)]  # BUG: the backward before the forward it waits on
        ops += [("B", i) for i in range(n_microbatches - warmup, n_microbatches)]
        schedule.append(ops)
    return schedule
