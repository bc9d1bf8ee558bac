def ring_allreduce(chunks_per_rank, comm):
    """Every rank sends in the all-gather, but the message that wraps around to rank 0 is never stored."""
    n = len(chunks_per_rank)
    out = [[chunk.clone() for chunk in rank] for rank in chunks_per_rank]
    for phase in ("reduce", "gather"):
        for step in range(n - 1):
            base = 0 if phase == "reduce" else 1
            inbox = []
            for src in range(n):
                c = (src + base - step) % n
                inbox.append(((src + 1) % n, c, comm.send(src, (src + 1) % n, out[src][c])))
            for dst, c, got in inbox:
                if phase == "reduce":
                    out[dst][c] = out[dst][c] + got
                elif dst != 0:
                    out[dst][c] = got
    return out
