def schedule_1f1b(n_stages, n_microbatches):
    p, m = n_stages, n_microbatches
    out = []
    for s in range(p):
        warmup = p - s - 1
        ops = [("F", i) for i in range(warmup)]
        f, b = warmup, 0
        while b < m - warmup:
            ops.append(("F", f))
            f += 1
            ops.append(("B", b))
            b += 1
        while b < m and b < f:
            ops.append(("B", b))
            b += 1
        out.append(ops)
    return out
