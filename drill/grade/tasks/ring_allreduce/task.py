"""The ``ring_allreduce`` task: ``ring_allreduce(chunks_per_rank, comm) -> out``.

N simulated ranks; ``chunks_per_rank[r][c]`` is rank r's data already split into N 1-D chunks, ``out[r][c]``
the reduced (summed) chunk c on rank r. Data moves only through ``comm.send(src, dst, tensor)``, which
returns the receiver's copy. ``comm`` lives on the user side (the wire's ``$comm`` recipe,
drill.grade.user.comm): it logs every send, and the log comes back as a modified input with the result, so
the pattern and the volume are graded from what was sent, not from how the code looks. The ring (Patarasuk
& Yuan 2009, as NCCL and Horovod run it): a reduce-scatter, then an all-gather, each N-1 rounds in which
every rank sends one chunk to its neighbour: 2(N-1) rounds, 2(N-1)/N of the data sent per rank, whatever N.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.user.wire import Comm
from drill.text.messages import Ev


@dataclass(frozen=True)
class RingVariant:
    pattern: str = "ring"  # ring (correct) | server: every rank's data to rank 0, the sums back from rank 0
    rs_offset: int = 0  # added to the chunk index of the reduce-scatter: (r - step + offset) % N
    ag_offset: int = 0  # added to the chunk index of the all-gather: (r + 1 - step + offset) % N
    gather_ranks: int = 0  # fewer ranks that forward in the all-gather (1: the last rank never does)
    gather_sent: bool = False  # ... though they still call comm.send: only the store of what they sent is skipped
    gather: bool = True  # the all-gather at all (without it each rank holds one reduced chunk)
    gather_adds: bool = False  # the all-gather adds the received chunk instead of overwriting it
    scatter_overwrites: bool = False  # the reduce-scatter overwrites its chunk instead of adding


CORRECT_RING = RingVariant()


def reference(chunks, variant: RingVariant = CORRECT_RING):
    """(out, sends as (src, dst, numel)) of the variant, on copies of ``chunks``."""
    n = len(chunks)
    buf = [[c.clone() for c in row] for row in chunks]
    sends = []
    if variant.pattern == "server":
        for r in range(1, n):
            for c in range(n):
                sends.append((r, 0, buf[r][c].numel()))
                buf[0][c] = buf[0][c] + buf[r][c]
        for r in range(1, n):
            for c in range(n):
                sends.append((0, r, buf[0][c].numel()))
                buf[r][c] = buf[0][c].clone()
        return buf, sends
    for step in range(n - 1):
        for r in range(n):
            c, dst = (r - step + variant.rs_offset) % n, (r + 1) % n
            sends.append((r, dst, buf[r][c].numel()))
            buf[dst][c] = buf[r][c].clone() if variant.scatter_overwrites else buf[dst][c] + buf[r][c]
    for step in range(n - 1 if variant.gather else 0):
        for r in range(n if variant.gather_sent else n - variant.gather_ranks):
            c, dst = (r + 1 - step + variant.ag_offset) % n, (r + 1) % n
            sends.append((r, dst, buf[r][c].numel()))
            if r >= n - variant.gather_ranks:
                continue
            buf[dst][c] = buf[dst][c] + buf[r][c] if variant.gather_adds else buf[r][c].clone()
    return buf, sends


@dataclass
class SendLog:
    sends: list  # (src, dst, numel, round) in the order sent
    rounds: int


FORGED = Ev("the send log was written by something other than comm.send")


def read_log(log: torch.Tensor, n: int) -> SendLog:
    """The send log as the user side left it; a record it could not have written is named."""
    count, rounds = int(log[0, 0]), int(log[0, 1])
    if count >= log.shape[0]:
        raise WrongShape(Ev("sent {count} messages, more than {most}: an all-reduce over {n} ranks needs {needs}", count=count,
                            most=log.shape[0] - 1, n=n, needs=2 * n * (n - 1)))  # fmt: skip
    sends = [tuple(int(x) for x in row) for row in log[1 : count + 1]]
    last = 1
    for src, dst, numel, rnd in sends:
        if not (0 <= src < n and 0 <= dst < n and src != dst and numel >= 0 and last <= rnd <= last + 1):
            raise WrongShape(FORGED)
        last = rnd
    if count and rounds != last:
        raise WrongShape(FORGED)
    return SendLog(sends, rounds if count else 0)


def chunks_of(value, n: int, sizes: list[int]) -> list[list[torch.Tensor]]:
    """The user's return value as n lists of n 1-D tensors of the input chunks' sizes, or WrongShape."""
    if not isinstance(value, (list, tuple)) or len(value) != n:
        if isinstance(value, (list, tuple)):
            raise WrongShape(Ev("returned {count} lists, not a list of {n} per-rank lists", count=len(value), n=n))
        raise WrongShape(Ev("returned {type}, not a list of {n} per-rank lists", type=type(value).__name__, n=n))
    out = []
    for r, row in enumerate(value):
        if not isinstance(row, (list, tuple)) or len(row) != n:
            raise WrongShape(Ev("out[{r}] is not a list of {n} chunks", r=r, n=n))
        for c, t in enumerate(row):
            if not isinstance(t, torch.Tensor):
                raise WrongShape(Ev("out[{r}][{c}] is {type}, not a 1-D tensor of {size} elements", r=r, c=c, type=type(t).__name__,
                                    size=sizes[c]))  # fmt: skip
            if tuple(t.shape) != (sizes[c],):
                raise WrongShape(Ev("out[{r}][{c}] is {shape}, not a 1-D tensor of {size} elements", r=r, c=c, shape=list(t.shape),
                                    size=sizes[c]))  # fmt: skip
        out.append([t.detach().double() for t in row])
    return out


def make_chunks(ctx: Context, offset: int, n: int, sizes: list[int]):
    gen = ctx.generator(offset)
    return [[ctx.randn(s, gen=gen, dtype=torch.float64) for s in sizes] for _ in range(n)]


def run(ctx: Context, chunks, keywords: bool = False):
    """(out, the send log, the inputs as the user's code left them)."""
    n = len(chunks)
    log = torch.zeros(4 * n * n + 9, 4, dtype=torch.int64)
    sent = [[c.clone() for c in row] for row in chunks]
    comm = Comm(n, log)
    value = ctx.call(ctx.entry, chunks_per_rank=sent, comm=comm) if keywords else ctx.call(ctx.entry, sent, comm)
    return chunks_of(value, n, [c.numel() for c in chunks[0]]), read_log(log, n), sent


def result_problem(out, chunks) -> Ev | None:
    n = len(chunks)
    total = [sum(chunks[r][c] for r in range(n)) for c in range(n)]
    for r in range(n):
        for c in range(n):
            err = (out[r][c] - total[c].double()).abs().max().item() if total[c].numel() else 0.0
            if not err <= 1e-9 * max(1.0, total[c].abs().max().item()):
                return Ev("out[{r}][{c}] is off by up to {err:.3g} from the sum of chunk {c} over the {n} ranks (every rank must end "
                          "with every reduced chunk)", r=r, c=c, err=err, n=n)  # fmt: skip
    return None


def neighbour_problem(log: SendLog, n: int) -> Ev | None:
    for i, (src, dst, _, _) in enumerate(log.sends):
        if dst not in ((src + 1) % n, (src - 1) % n):
            return Ev("send {i} goes from rank {src} to rank {dst}: in a ring a rank sends only to its neighbour", i=i + 1, src=src, dst=dst)
    return None


def result_check(ctx: Context, n: int, size: int, offset: int, what: Ev, keywords: bool = False):
    chunks = make_chunks(ctx, offset, n, [size] * n)
    out, log, _ = run(ctx, chunks, keywords)
    problem = result_problem(out, chunks)
    if problem:
        return outcome("fail", Ev("{label}: {what}", label=Ev("{n} ranks, chunks of {size}", n=n, size=size), what=problem))
    return outcome("pass", Ev("{what}: {n} ranks, chunks of {size}: every rank holds the sum, {sends} sends", what=what, n=n, size=size,
                              sends=len(log.sends)))  # fmt: skip


def pattern_check(ctx: Context, n: int, size: int, offset: int):
    chunks = make_chunks(ctx, offset, n, [size] * n)
    _, log, _ = run(ctx, chunks)
    problem = neighbour_problem(log, n)
    if problem:
        return outcome("fail", Ev("{label}: {what}", label=Ev("{n} ranks", n=n), what=problem))
    if log.rounds != 2 * (n - 1):
        return outcome("fail", Ev("{n} ranks: {rounds} rounds (in a round a rank sends at most one message and receives at most one); the "
                                  "ring takes 2(N-1) = {want}: N-1 to reduce-scatter, N-1 to all-gather", n=n, rounds=log.rounds,
                                  want=2 * (n - 1)))  # fmt: skip
    return outcome("pass", Ev("{n} ranks: neighbours only, {rounds} rounds = 2(N-1)", n=n, rounds=log.rounds))


def volume_check(ctx: Context, n: int, size: int, offset: int):
    chunks = make_chunks(ctx, offset, n, [size] * n)
    _, log, _ = run(ctx, chunks)
    per_rank = [0] * n
    for src, _, numel, _ in log.sends:
        per_rank[src] += numel
    want = 2 * (n - 1) * size
    for r, got in enumerate(per_rank):
        if got != want:
            return outcome("fail", Ev("{n} ranks, {elements} elements each: rank {r} sends {got} elements; the ring sends 2(N-1)/N of "
                                      "the data, {want}, from every rank (sent per rank: {per_rank})", n=n, elements=n * size, r=r,
                                      got=got, want=want, per_rank=per_rank))  # fmt: skip
    return outcome("pass", Ev("{n} ranks, {elements} elements each: every rank sends {want} = 2(N-1)/N of its data", n=n,
                              elements=n * size, want=want))  # fmt: skip


def ragged_check(ctx: Context, n: int, sizes: list[int], offset: int):
    chunks = make_chunks(ctx, offset, n, sizes)
    out, log, _ = run(ctx, chunks)
    problem = result_problem(out, chunks) or neighbour_problem(log, n)
    if problem:
        return outcome("fail", Ev("{label}: {what}", label=Ev("{n} ranks, chunk sizes {sizes}", n=n, sizes=sizes), what=problem))
    return outcome("pass", Ev("{n} ranks, chunk sizes {sizes}: every rank holds the sum, neighbours only", n=n, sizes=sizes))


def type_check(ctx: Context):
    run(ctx, make_chunks(ctx, 11, 3, [2, 2, 2]))
    return outcome("pass", Ev("{n} per-rank lists of {n} 1-D chunks", n=3))


def no_mutation_check(ctx: Context):
    chunks = make_chunks(ctx, 12, 4, [3] * 4)
    _, _, after = run(ctx, chunks)
    changed = [f"chunks_per_rank[{r}][{c}]" for r in range(4) for c in range(4) if not torch.equal(after[r][c], chunks[r][c])]
    if changed:
        names = ", ".join(changed[:4]) + (" ..." if len(changed) > 4 else "")
        return outcome("fail", Ev("modified in place: {names} (comm.send returns a copy: add it into a copy of your chunks)", names=names),
                       "mutates-input")  # fmt: skip
    return outcome("pass", Ev("{names} unchanged", names="chunks_per_rank"))


def drawn_config(ctx: Context, offset: int) -> tuple[int, int]:
    rng = random.Random(ctx.seed * 1000 + offset)
    return rng.choice([3, 5, 6, 7]), rng.randint(1, 9)


def encode(out, sends, n: int) -> torch.Tensor:
    """The result, then per rank the elements sent, the non-neighbour sends and the sends (for the diagnosis)."""
    per_rank, stray = [0.0] * n, 0.0
    for src, dst, numel, *_ in sends:
        per_rank[src] += numel
        stray += dst not in ((src + 1) % n, (src - 1) % n)
    flat = torch.cat([t.double().reshape(-1) for row in out for t in row])
    return torch.cat([flat, torch.tensor([*per_rank, stray, float(len(sends))], dtype=torch.float64)])


@dataclass(frozen=True)
class Probe:
    n: int
    size: int
    offset: int
    ragged: bool = False  # chunk c of size + c: the elements each rank sends tell which chunks it forwarded

    def chunks(self):
        gen = torch.Generator().manual_seed(self.offset)
        sizes = [self.size + c * self.ragged for c in range(self.n)]
        return [[torch.randn(s, generator=gen, dtype=torch.float64) for s in sizes] for _ in range(self.n)]

    def user(self, ctx: Context):
        try:
            out, log, _ = run(ctx, self.chunks())
        except WrongShape:
            return None
        return encode(out, log.sends, self.n)

    def expected(self, variant):
        variant = variant if isinstance(variant, RingVariant) else CORRECT_RING
        out, sends = reference(self.chunks(), variant)
        return encode(out, sends, self.n)


HYPOTHESES = (
    ("ring-parameter-server", RingVariant(pattern="server")),
    ("ring-chunk-off-by-one", RingVariant(rs_offset=1)),
    ("ring-chunk-off-by-one", RingVariant(rs_offset=-1)),
    ("ring-chunk-off-by-one", RingVariant(ag_offset=1)),
    ("ring-chunk-off-by-one", RingVariant(ag_offset=-1)),
    ("ring-allgather-skips-rank", RingVariant(gather_ranks=1)),
    ("ring-allgather-skips-rank", RingVariant(gather_ranks=1, gather_sent=True)),
    ("ring-allgather-missing", RingVariant(gather=False)),
    ("ring-allgather-adds", RingVariant(gather_adds=True)),
    ("ring-scatter-overwrites", RingVariant(scatter_overwrites=True)),
)


class RingAllreduceTask:
    name = "ring_allreduce"

    def checks(self, ctx: Context) -> list[CheckDef]:
        return [
            CheckDef("shape.returns-chunks", "shape", partial(type_check, ctx)),
            CheckDef("numerical.base", "numerical", partial(result_check, ctx, 4, 5, 100, Ev("four ranks"))),
            CheckDef("numerical.drawn", "numerical", partial(result_check, ctx, *drawn_config(ctx, 300), 101, Ev("drawn from the seed"))),
            CheckDef("numerical.neighbours-and-rounds", "numerical", partial(pattern_check, ctx, 5, 3, 102)),
            CheckDef("numerical.volume", "numerical", partial(volume_check, ctx, 6, 4, 103)),
            CheckDef("stability.many-ranks", "stability", partial(result_check, ctx, 16, 2, 104, Ev("sixteen ranks"))),
            CheckDef("robustness.ragged-chunks", "robustness", partial(ragged_check, ctx, 4, [5, 5, 5, 2], 105)),
            CheckDef("robustness.two-ranks", "robustness", partial(pattern_check, ctx, 2, 4, 106)),
            CheckDef("robustness.one-rank", "robustness", partial(result_check, ctx, 1, 6, 107, Ev("one rank, nothing to send"))),
            CheckDef("robustness.keyword-arguments", "robustness", partial(result_check, ctx, 3, 4, 108, Ev("called with keywords"), True)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(4, 3, 1), Probe(5, 2, 2), Probe(3, 4, 3), Probe(4, 1, 4, ragged=True)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = RingAllreduceTask()
