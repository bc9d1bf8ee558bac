def schedule_1f1b(n_stages, n_microbatches):
    p, m = n_stages, n_microbatches
    out = []
    for s in range(p):
        warmup = min(p - s, m)
        ops = [("F", i) for i in range(warmup)]
        f, b = warmup, 0
        while f < m:
            ops.append(("F", f))
            f += 1
            ops.append(("B", b))
            b += 1
        while b < m:
            ops.append(("B", b))
            b += 1
        out.append(ops)
    return out
