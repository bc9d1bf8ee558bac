def schedule_1f1b(n_stages, n_microbatches):
    """Built as a clock: at each tick every stage does what 1F1B lets it do, then the per-stage orders are read off."""
    p, m = n_stages, n_microbatches
    fwd, bwd = [0] * p, [0] * p  # next micro-batch to forward / backward on each stage
    done_f = [set() for _ in range(p)]
    done_b = [set() for _ in range(p)]
    order = [[] for _ in range(p)]
    while any(b < m for b in bwd):
        ran = []
        for s in range(p):
            in_flight = fwd[s] - bwd[s]
            can_b = bwd[s] < m and bwd[s] in done_f[s] and (s == p - 1 or bwd[s] in done_b[s + 1])
            can_f = fwd[s] < m and (s == 0 or fwd[s] in done_f[s - 1]) and in_flight < p - s
            if can_b and (in_flight >= p - s or not can_f or order[s][-1:] == [("F", fwd[s] - 1)]):
                ran.append((s, "B", bwd[s]))
                bwd[s] += 1
            elif can_f:
                ran.append((s, "F", fwd[s]))
                fwd[s] += 1
        for s, kind, i in ran:
            order[s].append((kind, i))
            (done_f if kind == "F" else done_b)[s].add(i)
    return order
