def schedule_1f1b(n_stages, n_microbatches):
    schedule = []
    for s in range(n_stages):
        warmup = min(n_stages - s - 1, n_microbatches)
        ops = [("F", i) for i in range(warmup)]
        for i in range(n_microbatches - warmup):
            ops += [("F", warmup + i), ("B", i)]
        # BUG: the cool-down backwards are missing
        schedule.append(ops)
    return schedule
