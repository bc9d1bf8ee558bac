"""The ``kv_cache`` task: causal self-attention decoded incrementally with a key/value cache.

``KVCacheAttention(d_model, n_heads).forward(x, cache=None) -> (out, cache)``. The cache is
opaque: the grader only passes back what the previous call returned. Decoding in any chunking
must equal the full causal forward, so a new chunk's queries align bottom-right: query i of an
n-token chunk after P cached tokens attends to keys 0..P+i.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_shape, moved
from drill.grade.checks.drawn_heads import drawn_heads_message
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.reference import CORRECT, Variant, attention, merge_heads, split_heads
from drill.grade.checks.module import BASE, NO_LAYOUT, Built, ModuleTask
from drill.text.messages import Ev

DECODE_CASES = (
    ("numerical.decode-one-token-at-a-time", (1,) * 7),
    ("numerical.decode-chunks-3-1-4", (3, 1, 4)),
    ("numerical.decode-prefill-5-then-1-1", (5, 1, 1)),
)


def drawn_decode(ctx: Context) -> tuple[tuple[int, ...], tuple[int, int, int]]:
    """Chunks (a prefill, a chunk, one token) and (B, heads, head_dim) drawn from the seed: the fixed cases all
    decode 3 heads of 4."""
    b, h, hd = ctx.sizes(320, (1, 4), (1, 6), (2, 9), avoid=BASE[2:])
    prefill, chunk = ctx.sizes(321, (2, 7), (2, 5))
    return (prefill, chunk, 1), (b, h, hd)


@dataclass(frozen=True)
class KVVariant:
    """A decoding mistake on top of an attention mistake (``base``)."""

    base: Variant = CORRECT
    align: str = "bottom-right"  # | top-left: chunk query i sees keys 0..i | unmasked: no mask once cached
    cache: str = "append"  # | overwrite: the returned cache holds only the newest chunk


def as_kv(variant) -> KVVariant:
    return variant if isinstance(variant, KVVariant) else KVVariant(base=variant)


def chunk_mask(n: int, p: int, variant: KVVariant, device=None) -> torch.Tensor:
    """[n, p + n], True = may attend, for n new queries after p cached keys."""
    ones = torch.ones(n, p + n, dtype=torch.bool, device=device)
    causal = variant.base.causal
    if causal == "none" or (variant.align == "unmasked" and p > 0):
        return ones
    shift = 0 if variant.align == "top-left" else p
    if causal == "triu":
        return torch.triu(ones, diagonal=shift)
    return torch.tril(ones, diagonal=shift + causal)


def decode_reference(x, params, layout, n_heads: int, sizes, variant=CORRECT):
    """Outputs of decoding x in chunks of ``sizes``, computed from the user's weights."""
    variant = as_kv(variant)
    base = variant.base
    d = x.shape[-1]
    outs, past, start = [], None, 0
    for n in sizes:
        projected = layout.project_qkv(x[:, start : start + n], params)
        q, k, v = (split_heads(projected[i], n_heads, d // n_heads, base) for i in base.order)
        if past is not None:
            k, v = torch.cat((past[0], k), dim=2), torch.cat((past[1], v), dim=2)
        out, _ = attention(q, k, v, chunk_mask(n, k.shape[2] - n, variant, x.device), base, d_model=d)
        merged = merge_heads(out, base)
        outs.append(layout.project_out(merged, params) if base.out_proj else merged)
        past = (k, v) if variant.cache == "append" else (k[:, :, -n:], v[:, :, -n:])
        start += n
    return torch.cat(outs, dim=1)


class KVCacheTask(ModuleTask):
    forward_contract = "x, cache=None"

    def __init__(self):
        super().__init__("kv_cache", causal=True)

    def init_args(self, d_model: int, n_heads: int) -> tuple:
        return (d_model, n_heads)

    def reference(self, built: Built, x, mask, dtype, variant=CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        return decode_reference(x.to(dtype), params, built.layout, built.n_heads, (x.shape[1],), variant)

    def decode(self, ctx: Context, module, x, sizes):
        """The user's outputs for x fed chunk by chunk, each call given the previous cache."""
        outs, cache, start = [], None, 0
        for n in sizes:
            ret = ctx.call(module, x[:, start : start + n].contiguous(), cache)
            if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and isinstance(ret[0], torch.Tensor)):
                raise WrongShape(Ev("forward(x, cache) returned {type}, not (out, cache)", type=type(ret).__name__))
            out, cache = ret
            expect_shape(out, (x.shape[0], n, x.shape[2]), Ev("output of a {n}-token step", n=n))
            outs.append(out)
            start += n
        return torch.cat(outs, dim=1)

    # --- checks ---------------------------------------------------------------

    def decode_check(self, ctx: Context, sizes, offset, batch_heads=(BASE[0], *BASE[2:])):
        """Chunks of ``sizes`` against the full causal forward, for (B, heads, head_dim) ``batch_heads``."""
        b, h, hd = batch_heads
        built = self.build(ctx, h * hd, h)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, (b, sum(sizes), h, hd), 1200 + offset, torch.float64)
        out = self.decode(ctx, built.module, x.float(), sizes)
        truth, same = (self.reference(built, x, None, dtype) for dtype in (torch.float64, torch.float32))
        if set(sizes) == {1}:
            label = Ev("outputs decoded one token at a time")
        else:
            chunks = Ev("{name}", name=sizes[-1])
            for n in reversed(sizes[:-1]):
                chunks = Ev("{n} then {rest}", n=n, rest=chunks)
            label = Ev("outputs decoded in chunks of {sizes} tokens", sizes=chunks)
        result = against_truth([(label, out, truth, same)])
        if batch_heads != (BASE[0], *BASE[2:]):
            result.message = drawn_heads_message(result.message, b, h, hd)
        return result

    def chunk_leak_check(self, ctx: Context):
        """After 3 cached tokens, a 4-token chunk must still be causal inside itself."""
        built = self.build(ctx, 12, 3, torch.float64)
        x = ctx.randn(2, 7, 12, gen=ctx.generator(1300), dtype=torch.float64)
        base = self.decode(ctx, built.module, x, (3, 4))
        leaks = []
        for j in range(4, 7):
            x2 = x.clone()
            x2[:, j] += 10.0
            change = moved(self.decode(ctx, built.module, x2, (3, 4)), base).amax(dim=0)
            leaks += [(i, j) for i in range(3, j) if change[i] > LEAK_THRESHOLD]
        if leaks:
            i, j = min(leaks)
            return outcome("fail", Ev("in a chunk after 3 cached tokens, position {i} changes when position {j} changes", i=i, j=j))
        return outcome("pass", Ev("inside a 4-token chunk after 3 cached tokens, no position sees a later one"))

    def fresh_sequence_check(self, ctx: Context):
        """A call with cache=None starts a new sequence: what an earlier sequence left must not reach it."""
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        first, second = (ctx.randn(BASE[0], 4, BASE[2] * BASE[3], gen=ctx.generator(1500 + i)) for i in range(2))
        alone = self.decode(ctx, self.build(ctx, BASE[2] * BASE[3], BASE[2]).module, second, (2, 1, 1))
        self.decode(ctx, built.module, first, (2, 1, 1))
        after = self.decode(ctx, built.module, second, (2, 1, 1))
        drift = (after.detach() - alone.detach()).abs().nan_to_num(nan=float("inf")).max().item()
        if drift > 0:
            return outcome("fail", Ev("a second sequence (cache=None) decoded on the same module differs by {d:.3g} "
                                      "from the same sequence on a fresh module: state kept from the first sequence", d=drift),
                           "kv-cache-stale-state")  # fmt: skip
        return outcome("pass", Ev("a new sequence (cache=None) on a used module equals it on a fresh one"))

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = super().checks(ctx)
        defs.append(CheckDef("robustness.fresh-sequence", "robustness", partial(self.fresh_sequence_check, ctx)))
        for n, (check_id, sizes) in enumerate(DECODE_CASES):
            defs.append(CheckDef(check_id, "numerical", partial(self.decode_check, ctx, sizes, n)))
        sizes, batch_heads = drawn_decode(ctx)
        defs.append(CheckDef("numerical.decode-drawn", "numerical", partial(self.decode_check, ctx, sizes, 3, batch_heads)))
        defs.append(CheckDef("mask-leak.decode-chunk", "mask-leak", partial(self.chunk_leak_check, ctx)))
        return defs

    # --- diagnosis --------------------------------------------------------------

    def probes(self, ctx: Context):
        probes = super().probes(ctx)
        if not probes:
            return probes
        built = probes[0].built
        x = ctx.randn(2, 8, BASE[2] * BASE[3], gen=ctx.generator(1400), dtype=torch.float64)
        return probes + [DecodeProbe(self, built, x, sizes) for sizes in ((3, 1, 4), (2, 2, 1, 3))]

    def hypotheses(self, ctx: Context):
        found = [(code, KVVariant(base=v)) for code, v in super().hypotheses(ctx)]
        return found + [
            ("causal-mask-missing", KVVariant(base=replace(CORRECT, causal="none"))),
            ("kv-cache-mask-top-left", KVVariant(align="top-left")),
            ("kv-cache-chunk-unmasked", KVVariant(align="unmasked")),
            ("kv-cache-not-appended", KVVariant(cache="overwrite")),
        ]


@dataclass(frozen=True)
class DecodeProbe:
    task: KVCacheTask
    built: Built
    x: torch.Tensor
    sizes: tuple[int, ...]

    def user(self, ctx: Context):
        return self.task.decode(ctx, self.built.module, self.x.clone(), self.sizes)

    def expected(self, variant):
        params = self.built.params(torch.float64)
        return decode_reference(self.x, params, self.built.layout, self.built.n_heads, self.sizes, variant)


TASK = KVCacheTask()
