def ring_allreduce(chunks_per_rank, comm):
    n = len(chunks_per_rank)
    buf = [list(row) for row in chunks_per_rank]
    for step in range(n - 1):  # reduce-scatter: rank r ends with the full sum of chunk r + 1
        for r in range(n):
            c = (r - step) % n
            buf[(r + 1) % n][c] += comm.send(r, (r + 1) % n, buf[r][c])  # BUG: adds into the caller's tensors
    for step in range(n - 1):  # all-gather: pass the reduced chunks around the ring
        for r in range(n):
            c = (r + 1 - step) % n
            buf[(r + 1) % n][c] = comm.send(r, (r + 1) % n, buf[r][c])
    return buf
