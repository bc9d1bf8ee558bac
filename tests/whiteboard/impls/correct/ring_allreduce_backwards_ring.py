import torch


def ring_allreduce(chunks_per_rank, comm):
    """The ring run the other way round (rank r sends to r - 1), with the rank that owns each chunk named."""
    n = len(chunks_per_rank)
    acc = [list(map(torch.clone, row)) for row in chunks_per_rank]
    left = [(r - 1) % n for r in range(n)]
    for step in range(n - 1):
        for r in range(n):
            c = (r + step) % n
            acc[left[r]][c] += comm.send(r, left[r], acc[r][c])  # acc holds copies: adding in place is fine
    # rank r now owns chunk (r - 1) % n, fully reduced
    for step in range(n - 1):
        for r in range(n):
            c = (r - 1 + step) % n
            acc[left[r]][c] = comm.send(r, left[r], acc[r][c])
    return acc
