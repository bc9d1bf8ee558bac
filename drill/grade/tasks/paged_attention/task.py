"""The ``paged_attention`` task: ``paged_attention(q, k_cache, v_cache, block_table, context_lens)``, one decode step.

Token t of sequence b lives in physical block ``block_table[b, t // block_size]``, slot
``t % block_size``; table entries past a sequence's last block and slots past its context length
are garbage. The judge builds the caches with a known owner for every slot, so it can say which
slot a leak came from; :func:`paged_reference` reproduces the classic indexing mistakes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.common import deterministic_check, dtype_id, large_logits_verdict, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, first_nonfinite, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.reference import CORRECT, Variant, scale_factor
from drill.text.messages import Ev

# (B, H, D, block_size, max_blocks, num_blocks, context_lens): B, H, D and block_size differ.
BASE = (3, 2, 8, 4, 5, 16, (13, 4, 7))
SHAPE_CASES = (
    ("shape.base", BASE),
    ("shape.one-sequence", (1, 3, 8, 4, 3, 5, (9,))),
    ("shape.one-token", (2, 3, 8, 4, 2, 6, (1, 1))),
)
NUMERICAL_CASES = (
    ("numerical.base", BASE),
    ("numerical.full-blocks", (3, 2, 8, 4, 4, 14, (8, 4, 16))),
    ("numerical.block-size-16", (2, 3, 8, 16, 3, 8, (37, 16))),
    ("numerical.block-size-1", (3, 2, 8, 1, 12, 30, (11, 1, 6))),
)
# Probes keep every context below block_size**2 and block_size <= max_blocks, so the swapped
# indexing (block t % block_size, slot t // block_size) stays in range and can be compared.
PROBES = ((3, 2, 4, 4, 4, 14, (13, 4, 7)), (2, 2, 4, 3, 5, 12, (8, 5)))


@dataclass(frozen=True)
class PagedVariant:
    """An indexing mistake on top of an attention mistake (``base``)."""

    base: Variant = CORRECT
    index: str = "table"  # | swapped: block t % bs, slot t // bs | contiguous: the table ignored, physical
    #                       blocks 0, 1, 2, ... | sorted: the sequence's blocks in ascending physical order
    extent: str = "context"  # | blocks: every slot of the used blocks | table: every table entry | plus-one: t <= len


@dataclass
class Paged:
    """Inputs of one call and the owner of every cache slot: (sequence, token) or None for garbage."""

    q: torch.Tensor
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    block_table: torch.Tensor
    context_lens: torch.Tensor
    owners: dict

    def args(self, dtype=None, index_dtype=torch.int64):
        floats = (self.q, self.k_cache, self.v_cache)
        if dtype is not None:
            floats = tuple(t.to(dtype) for t in floats)
        return (*floats, self.block_table.to(index_dtype), self.context_lens.to(index_dtype))


def build(ctx: Context, config, offset: int, dtype=torch.float64) -> Paged:
    """Random caches; each sequence gets fresh physical blocks in a shuffled order, the rest of its
    table random block ids (possibly another sequence's)."""
    b, h, d, bs, max_blocks, num_blocks, lens = config
    gen = ctx.generator(offset)
    q = ctx.randn(b, h, d, gen=gen, dtype=dtype)
    k_cache, v_cache = (ctx.randn(num_blocks, bs, h, d, gen=gen, dtype=dtype) for _ in range(2))
    free = torch.randperm(num_blocks, generator=gen).tolist()
    table = torch.randint(num_blocks, (b, max_blocks), generator=gen)
    owners = {}
    for s, n in enumerate(lens):
        used = -(-n // bs)
        for logical in range(used):
            block = free.pop()
            table[s, logical] = block
            for slot in range(bs):
                t = logical * bs + slot
                if t < n:
                    owners[(block, slot)] = (s, t)
    return Paged(q, k_cache, v_cache, table.to(ctx.device), torch.tensor(lens).to(ctx.device), owners)


def token_slots(table_row, n: int, bs: int, variant: PagedVariant):
    """(physical blocks, slots) of the tokens a sequence of length n reads."""
    extent = {"context": n, "plus-one": n + 1, "blocks": -(-n // bs) * bs, "table": table_row.numel() * bs}[variant.extent]
    t = torch.arange(extent, device=table_row.device)
    if variant.index == "swapped":
        return table_row[t % bs], t // bs
    if variant.index == "contiguous":
        return t // bs, t % bs
    row = table_row
    if variant.index == "sorted":
        used = -(-n // bs)
        row = torch.cat((table_row[:used].sort().values, table_row[used:]))
    return row[t // bs], t % bs


def paged_reference(q, k_cache, v_cache, block_table, context_lens, variant=CORRECT):
    """Attention of each sequence over the tokens ``variant`` reads, in the inputs' dtype."""
    variant = variant if isinstance(variant, PagedVariant) else PagedVariant(base=variant)
    base = variant.base
    bs = k_cache.shape[1]
    scale = scale_factor(base, q.shape[-1], None)
    outs = []
    for s in range(q.shape[0]):
        blocks, slots = token_slots(block_table[s].long(), int(context_lens[s]), bs, variant)
        keys, values = k_cache[blocks, slots], v_cache[blocks, slots]  # [L, H, D]
        if base.order == (0, 2, 1):
            keys, values = values, keys
        weights = torch.softmax(torch.einsum("hd,lhd->hl", q[s], keys) * scale, dim=-1)
        outs.append(torch.einsum("hl,lhd->hd", weights, values))
    return torch.stack(outs)


def run(ctx: Context, *args):
    return unpack(ctx.call(ctx.entry, *args))[0]


def describe(config) -> str:
    b, h, d, bs, max_blocks, num_blocks, lens = config
    return f"block_size={bs}, context_lens={list(lens)}"


def shape_check(ctx: Context, config):
    paged = build(ctx, config, 1, torch.float32)
    out = run(ctx, *paged.args())
    problem = expect_like(out, paged.q.shape, paged.q)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} ({config})", shape=list(out.shape), config=describe(config)))


def numerical_check(ctx: Context, config, dtype, offset: int):
    paged = build(ctx, config, 100 + offset)
    out = run(ctx, *paged.args(dtype))
    truth, same = (paged_reference(*paged.args(precision)) for precision in (torch.float64, dtype))
    return against_truth([(Ev("output ({what})", what=Ev("{code}", code=describe(config))), out, truth, same)])


def drawn_config(ctx: Context):
    """B, H, D, block_size (distinct), max_blocks and the context lengths drawn from the seed; D is never 8, the head
    dim of every fixed numerical case. Two spare physical blocks beyond the ones the sequences use."""
    b, h, d, bs = ctx.sizes(130, (1, 4), (1, 5), (2, 12), (2, 9), avoid=(BASE[2],))
    max_blocks = ctx.sizes(131, (2, 6))[0]
    lens = tuple(torch.randint(1, max_blocks * bs + 1, (b,), generator=ctx.generator(132)).tolist())
    return b, h, d, bs, max_blocks, sum(-(-n // bs) for n in lens) + 2, lens


def drawn_check(ctx: Context):
    """One call on caches of a configuration drawn from the seed (float32)."""
    config = drawn_config(ctx)
    b, h, d = config[:3]
    where = Ev("{config}, drawn from the seed", config=f"{describe(config)}, B={b}, H={h}, D={d}")
    paged = build(ctx, config, 133)
    out = run(ctx, *paged.args(torch.float32))
    truth, same = (paged_reference(*paged.args(precision)) for precision in (torch.float64, torch.float32))
    result = against_truth([(Ev("output ({what})", what=where), out, truth, same)])
    if result.status == "pass":
        result.message = Ev("{what} ({where})", what=result.message, where=where)
    return result


def gradient_check(ctx: Context, dtype):
    paged = build(ctx, BASE, 200)
    seed_grad = ctx.randn(*paged.q.shape, gen=ctx.generator(201), dtype=torch.float64)
    leaves = [t.to(dtype).requires_grad_() for t in paged.args()[:3]]
    out = run(ctx, *leaves, *paged.args()[3:])
    expect_shape(out, seed_grad.shape)
    ctx.call(lambda: (out * seed_grad.to(out.dtype)).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, dtype):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in paged.args()[:3]]
        (paged_reference(*refs, *paged.args()[3:]) * seed_grad.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, exact, same in zip(("q", "k_cache", "v_cache"), leaves, grads[torch.float64], grads[dtype]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("{code}", code=f"d{name}"), leaf.grad, exact, same))
    return against_truth(pairs)


def slot_leak_check(ctx: Context):
    """Perturb every cache slot in turn (float64): only its owner's output may move, and it must."""
    config = (3, 2, 4, 4, 5, 12, (13, 4, 7))
    paged = build(ctx, config, 300)
    base = run(ctx, *paged.args())
    expect_shape(base, paged.q.shape)
    gen = ctx.generator(301)
    num_blocks, bs = paged.k_cache.shape[:2]
    lens = paged.context_lens.tolist()
    for block in range(num_blocks):
        for slot in range(bs):
            k2, v2 = paged.k_cache.clone(), paged.v_cache.clone()
            k2[block, slot] += 3 * ctx.randn(*k2.shape[2:], gen=gen, dtype=torch.float64)
            v2[block, slot] += 10 * ctx.randn(*v2.shape[2:], gen=gen, dtype=torch.float64)
            change = moved(run(ctx, paged.q, k2, v2, *paged.args()[3:]), base).amax(dim=-1)  # [B]
            owner = paged.owners.get((block, slot))
            for s in range(len(lens)):
                if owner is not None and owner[0] == s:
                    if not change[s] > LEAK_THRESHOLD:
                        return outcome("fail", Ev("token {t} of sequence {s} (block {block}, slot {slot}) never reaches its output",
                                                  t=owner[1], s=s, block=block, slot=slot))  # fmt: skip
                elif change[s] > LEAK_THRESHOLD:
                    what = (Ev("token {t} of sequence {s}", t=owner[1], s=owner[0]) if owner else
                            Ev("a slot no sequence holds (past a context length, or a block past the table's used entries)"))  # fmt: skip
                    return outcome("fail", Ev("sequence {s} (context_lens {n}) reads block {block}, slot {slot}: {what} (moved {change:.3g})",
                                              s=s, n=lens[s], block=block, slot=slot, what=what, change=change[s].item()))  # fmt: skip
    return outcome("pass", Ev("{blocks} blocks x {bs} slots: each moves only its own sequence's output, garbage none", blocks=num_blocks, bs=bs))


def garbage_nan_check(ctx: Context):
    """Garbage slots hold NaN and inf, as memory from torch.empty can: the output must not see them."""
    paged = build(ctx, BASE, 400)
    truth = paged_reference(*paged.args())
    finite = run(ctx, *paged.args())
    expect_shape(finite, truth.shape)
    if not (finite - truth).abs().max().item() <= 1e-9 * max(1.0, truth.abs().max().item()):
        return outcome("skip", Ev("skipped: the output is already wrong with finite garbage (see the numerical checks)"))
    k2, v2 = paged.k_cache.clone(), paged.v_cache.clone()
    real = torch.zeros(k2.shape[:2], dtype=torch.bool)
    for block, slot in paged.owners:
        real[block, slot] = True
    garbage = ~real.to(ctx.device)
    k2[garbage], v2[garbage] = float("nan"), float("inf")
    out = run(ctx, paged.q, k2, v2, *paged.args()[3:])
    expect_shape(out, truth.shape)
    bad = first_nonfinite(out, truth)
    if bad is not None:
        return outcome("fail", Ev("with NaN keys and inf values in the garbage slots, the output is non-finite at {at}", at=list(bad)),
                       "paged-garbage-nan")  # fmt: skip
    error = (out - truth).abs().max().item()
    if error > 1e-9 * max(1.0, truth.abs().max().item()):
        return outcome("fail", Ev("with NaN and inf garbage, max error {e:.3g} against the float64 reference", e=error))
    return outcome("pass", Ev("NaN keys and inf values in the garbage slots never reach the output"))


def large_logits_check(ctx: Context):
    paged = build(ctx, BASE, 600)
    q, k_cache = 31.6 * paged.q, 31.6 * paged.k_cache
    args = (q, k_cache, paged.v_cache, *paged.args()[3:])
    return large_logits_verdict(run(ctx, *args), paged_reference(*args))


def int32_check(ctx: Context):
    paged = build(ctx, BASE, 700)
    out = run(ctx, *paged.args(torch.float32, torch.int32))
    truth, same = (paged_reference(*paged.args(precision)) for precision in (torch.float64, torch.float32))
    return against_truth([(Ev("output (block_table and context_lens int32, as vLLM's)"), out, truth, same)])


def varying_check(ctx: Context):
    for n, config in enumerate((BASE, NUMERICAL_CASES[2][1], NUMERICAL_CASES[3][1])):
        paged = build(ctx, config, 800 + n)
        out = run(ctx, *paged.args(torch.float32))
        truth, same = (paged_reference(*paged.args(precision)) for precision in (torch.float64, torch.float32))
        result = against_truth([(Ev("call {n} ({config})", n=n + 1, config=describe(config)), out, truth, same)])
        if result.status != "pass":
            return result
    return outcome("pass", Ev("calls with block_size 4, 16 and 1 in a row all match"))


@dataclass(frozen=True)
class Probe:
    paged: Paged

    def user(self, ctx: Context):
        return run(ctx, *(t.clone() for t in self.paged.args()))

    def expected(self, variant):
        return paged_reference(*self.paged.args(), variant)


class PagedAttentionTask:
    name = "paged_attention"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef(case[0], "shape", partial(shape_check, ctx, case[1])) for case in SHAPE_CASES]
        for dtype in ctx.dtypes:
            for n, (check_id, config) in enumerate(NUMERICAL_CASES):
                defs.append(CheckDef(check_id.replace("numerical", dtype_id("numerical", dtype)), "numerical",
                                     partial(numerical_check, ctx, config, dtype, n)))  # fmt: skip
            if dtype == torch.float32:
                defs.append(CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)))
            defs.append(CheckDef(f"{dtype_id('gradient', dtype)}.q-and-caches", "gradient", partial(gradient_check, ctx, dtype)))
        paged = build(ctx, BASE, 1000, torch.float32)
        args = paged.args()
        named = dict(zip(("q", "k_cache", "v_cache", "block_table", "context_lens"), args))
        defs += [
            CheckDef("mask-leak.slots", "mask-leak", partial(slot_leak_check, ctx)),
            CheckDef("stability.garbage-nan", "stability", partial(garbage_nan_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", partial(no_mutation_check, ctx, lambda: run(ctx, *args), named)),
            CheckDef("robustness.deterministic", "robustness",
                     partial(deterministic_check, lambda: run(ctx, *(t.clone() for t in args)))),  # fmt: skip
            CheckDef("robustness.int32-indices", "robustness", partial(int32_check, ctx)),
            CheckDef("robustness.varying-block-size", "robustness", partial(varying_check, ctx)),
        ]
        return defs

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(build(ctx, config, 1100 + n)) for n, config in enumerate(PROBES)]

    def hypotheses(self, ctx: Context):
        return (
            ("paged-index-swapped", PagedVariant(index="swapped")),
            ("paged-physical-order", PagedVariant(index="contiguous")),
            ("paged-physical-order", PagedVariant(index="sorted")),
            ("paged-context-unmasked", PagedVariant(extent="blocks")),
            ("paged-context-unmasked", PagedVariant(extent="table")),
            ("paged-context-off-by-one", PagedVariant(extent="plus-one")),
            ("scale-missing", PagedVariant(base=replace(CORRECT, scale="none"))),
            ("scale-by-d", PagedVariant(base=replace(CORRECT, scale="d"))),
            ("k-v-swapped", PagedVariant(base=replace(CORRECT, order=(0, 2, 1)))),
        )


TASK = PagedAttentionTask()
