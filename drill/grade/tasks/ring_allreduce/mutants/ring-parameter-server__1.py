def ring_allreduce(chunks_per_rank, comm):
    n = len(chunks_per_rank)
    total = [c.clone() for c in chunks_per_rank[0]]
    for r in range(1, n):  # BUG: every rank's data to rank 0, then rank 0 broadcasts the sums
        for c in range(n):
            total[c] = total[c] + comm.send(r, 0, chunks_per_rank[r][c])
    out = [total]
    for r in range(1, n):
        out.append([comm.send(0, r, t) for t in total])
    return out
