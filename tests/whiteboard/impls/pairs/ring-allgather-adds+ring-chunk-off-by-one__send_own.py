def ring_allreduce(chunks_per_rank, comm):
    """The all-gather forwards the chunk the rank holds from round 0 (its own index) and adds it on arrival."""
    n = len(chunks_per_rank)
    acc = [[t.clone() for t in row] for row in chunks_per_rank]
    for gather in (False, True):
        for step in range(n - 1):
            outgoing = [(r, (r - step) % n) for r in range(n)]
            arrived = [(r, c, comm.send(r, (r + 1) % n, acc[r][c])) for r, c in outgoing]
            for r, c, got in arrived:
                dst = (r + 1) % n
                acc[dst][c] = acc[dst][c] + got
    return acc
