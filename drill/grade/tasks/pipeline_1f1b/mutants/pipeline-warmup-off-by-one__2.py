def schedule_1f1b(n_stages, n_microbatches):
    schedule = []
    for s in range(n_stages):
        warmup = max(0, min(n_stages - s - 2, n_microbatches))  # BUG: one forward too few
        ops = [("F", i) for i in range(warmup)]
        for i in range(n_microbatches - warmup):
            ops += [("F", warmup + i), ("B", i)]
        ops += [("B", i) for i in range(n_microbatches - warmup, n_microbatches)]
        schedule.append(ops)
    return schedule
