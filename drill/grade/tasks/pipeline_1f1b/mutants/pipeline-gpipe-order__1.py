def schedule_1f1b(n_stages, n_microbatches):
    schedule = []
    for s in range(n_stages):
        warmup = n_microbatches  # BUG: GPipe: every forward first, then every backward
        ops = [("F", i) for i in range(warmup)]
        for i in range(n_microbatches - warmup):
            ops += [("F", warmup + i), ("B", i)]
        ops += [("B", i) for i in range(n_microbatches - warmup, n_microbatches)]
        schedule.append(ops)
    return schedule
