def ring_allreduce(chunks_per_rank, comm):
    n = len(chunks_per_rank)
    buf = [[c.clone() for c in row] for row in chunks_per_rank]
    for step in range(n - 1):
        sent = []
        for r in range(n):
            c = (r - step) % n
            sent.append((c, comm.send(r, (r + 1) % n, buf[r][c])))
        for r in range(n):
            c, t = sent[r]
            buf[(r + 1) % n][c] = buf[(r + 1) % n][c] + t
    for step in range(n - 1):
        sent = []
        for r in range(n):
            c = (r - step) % n
            sent.append((c, comm.send(r, (r + 1) % n, buf[r][c])))
        for r in range(n):
            c, t = sent[r]
            buf[(r + 1) % n][c] = buf[(r + 1) % n][c] + t
    return buf
