def ring_allreduce(chunks_per_rank, comm):
    """Reduce-scatter right; the all-gather starts one chunk ahead of the one each rank has finished."""
    world = len(chunks_per_rank)
    data = [list(map(lambda t: t.clone(), mine)) for mine in chunks_per_rank]
    right = lambda r: (r + 1) % world  # noqa: E731
    for rnd in range(world - 1):
        msgs = {r: ((r - rnd) % world, comm.send(r, right(r), data[r][(r - rnd) % world])) for r in range(world)}
        for r, (idx, payload) in msgs.items():
            data[right(r)][idx] += payload
    for rnd in range(world - 1):
        msgs = {r: ((r + 2 - rnd) % world, comm.send(r, right(r), data[r][(r + 2 - rnd) % world])) for r in range(world)}
        for r, (idx, payload) in msgs.items():
            data[right(r)][idx] = payload
    return data
