def ring_allreduce(chunks_per_rank, comm):
    n = len(chunks_per_rank)
    totals = [c.clone() for c in chunks_per_rank[0]]
    for r in range(1, n):
        for c, chunk in enumerate(chunks_per_rank[r]):
            totals[c] = totals[c] + comm.send(r, 0, chunk)
    out = [[t.clone() for t in totals]]
    for r in range(1, n):
        out.append([comm.send(0, r, t) for t in totals])
    return out
