def ring_allreduce(chunks_per_rank, comm):
    """Each round gathers every rank's message first, then applies them: a synchronous step, as NCCL runs one."""
    n = len(chunks_per_rank)
    data = [[chunk.clone() for chunk in row] for row in chunks_per_rank]

    def ring_round(index, combine):
        messages = [(r, index(r), comm.send(r, (r + 1) % n, data[r][index(r)])) for r in range(n)]
        for r, c, received in messages:
            dst = (r + 1) % n
            data[dst][c] = combine(data[dst][c], received)

    for s in range(n - 1):
        ring_round(lambda r: (r - s) % n, lambda mine, theirs: mine + theirs)
    for s in range(n - 1):
        ring_round(lambda r: (r + 1 - s) % n, lambda mine, theirs: theirs)
    return data
