"""The ``mla`` task: ``MultiHeadLatentAttention(d_model, n_heads, d_latent)``, ``forward(x, cache=None) -> (out, cache)``.

DeepSeek-V2's attention without the decoupled RoPE key: keys and values are up-projected from one
shared latent ``c_kv = W_dkv x``, and the cache is that latent. The module engine
(drill.grade.checks.module) runs the causal battery on the full forward with a reference built
from the user's own five Linear layers; decoding checks (as for kv_cache: a chunk after P cached
tokens aligns bottom-right) and a check that the cache is the latent come on top.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch
from torch import nn
from torch.nn import functional as F

from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_shape, moved
from drill.grade.checks.drawn_heads import drawn_heads_message
from drill.grade.checks.module import BASE, NO_LAYOUT, Built, ModuleTask
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.layouts import is_linear
from drill.grade.reference import CORRECT, Variant, attention, merge_heads, split_heads
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
ACCEPTED = Ev("nn.Linear layers W_q (d_model -> d_model), W_dkv (d_model -> d_latent), W_uk and W_uv "
              "(d_latent -> d_model) and W_o (d_model -> d_model), bias optional")  # fmt: skip


def one_then_another(sizes) -> Ev | int:
    """Chunk sizes in the order they were fed: "3 then 1 then 4"."""
    joined = sizes[-1]
    for size in reversed(sizes[:-1]):
        joined = Ev("{size} then {rest}", size=size, rest=joined)
    return joined


def latent_size(d_model: int) -> int:
    """The d_latent the grader builds with: below d_model, and never equal to a head dim it uses."""
    return d_model // 2 + 1


def linear(x, params, name):
    return F.linear(x, params[f"{name}.weight"], params.get(f"{name}.bias"))


@dataclass(frozen=True)
class MlaLayout:
    """The five projections of the contract; ``shared`` models one up-projection used for K and V."""

    d_latent: int
    shared: str = ""  # | W_uk: K and V both from W_uk | W_uv: both from W_uv

    def describe(self) -> Ev:
        return Ev("W_q, W_dkv (d_latent {n}), W_uk, W_uv, W_o", n=self.d_latent)

    def params(self, module: nn.Module) -> dict[str, torch.Tensor]:
        names = {f"{layer}.{p}" for layer in ("W_q", "W_dkv", "W_uk", "W_uv", "W_o") for p in ("weight", "bias")}
        return {name: p for name, p in module.named_parameters() if name in names}

    def latent(self, x, params):
        return linear(x, params, "W_dkv")

    def up(self, c, params):
        """(k, v) from latents c."""
        return linear(c, params, self.shared or "W_uk"), linear(c, params, self.shared or "W_uv")

    def project_qkv(self, x, params):
        return (linear(x, params, "W_q"), *self.up(self.latent(x, params), params))

    def project_out(self, y, params):
        return linear(y, params, "W_o")


def find_mla_layout(module: nn.Module, d_model: int, d_latent: int) -> MlaLayout | None:
    sizes = {"W_q": (d_model, d_model), "W_dkv": (d_model, d_latent), "W_uk": (d_latent, d_model),
             "W_uv": (d_latent, d_model), "W_o": (d_model, d_model)}  # fmt: skip
    ok = all(is_linear(getattr(module, name, None), *shape) for name, shape in sizes.items())
    return MlaLayout(d_latent) if ok else None


@dataclass(frozen=True)
class MlaVariant:
    """An MLA or decoding mistake on top of an attention mistake (``base``)."""

    base: Variant = CORRECT
    latent_scale: bool = False  # scores scaled by 1/sqrt(d_latent)
    shared: str = ""  # | W_uk | W_uv: one up-projection for both K and V
    align: str = "bottom-right"  # | top-left: chunk query i sees keys 0..i | unmasked: no mask once cached
    cache: str = "append"  # | overwrite: the returned cache holds only the newest chunk


def as_mla(variant) -> MlaVariant:
    return variant if isinstance(variant, MlaVariant) else MlaVariant(base=variant)


def chunk_mask(n: int, p: int, variant: MlaVariant, device=None) -> torch.Tensor:
    """[n, p + n], True = may attend, for n new queries after p cached latents."""
    ones = torch.ones(n, p + n, dtype=torch.bool, device=device)
    causal = variant.base.causal
    if causal == "none" or (variant.align == "unmasked" and p > 0):
        return ones
    shift = 0 if variant.align == "top-left" else p
    if causal == "triu":
        return torch.triu(ones, diagonal=shift)
    return torch.tril(ones, diagonal=shift + causal)


def mla_reference(x, params, layout: MlaLayout, n_heads: int, sizes, variant=CORRECT):
    """Outputs of feeding x in chunks of ``sizes`` (one chunk: the full forward), from the user's weights.

    Queries come from each chunk, keys and values from every latent kept so far, as a latent cache does."""
    variant = as_mla(variant)
    base, layout = variant.base, replace(layout, shared=variant.shared)
    d = x.shape[-1]
    hd = d // n_heads
    scale_dim = layout.d_latent if variant.latent_scale else d
    if variant.latent_scale:
        base = replace(base, scale="sqrt-model")  # 1/sqrt(d_model), with d_model = d_latent below
    outs, kept, start = [], None, 0
    for n in sizes:
        chunk = x[:, start : start + n]
        latents = layout.latent(chunk, params)
        seen = latents if kept is None else torch.cat((kept, latents), dim=1)
        k, v = layout.up(seen, params)
        if base.order == (0, 2, 1):
            k, v = v, k
        q, k, v = (split_heads(z, n_heads, hd, base) for z in (linear(chunk, params, "W_q"), k, v))
        out, _ = attention(q, k, v, chunk_mask(n, seen.shape[1] - n, variant, x.device), base, d_model=scale_dim)
        merged = merge_heads(out, base)
        outs.append(layout.project_out(merged, params) if base.out_proj else merged)
        kept = seen if variant.cache == "append" else latents
        start += n
    return torch.cat(outs, dim=1)


def cache_tensors(cache) -> list[torch.Tensor]:
    """The tensors a cache holds: itself, or those of a tuple, list or dict (one level, as caches are written)."""
    items = cache.values() if isinstance(cache, dict) else cache if isinstance(cache, (tuple, list)) else [cache]
    return [t for t in items if isinstance(t, torch.Tensor)]


def misshapen_cache(cache, truth, d_model: int, head_dim: int):
    """A cache that is not one [B, 5, d_latent] tensor, by what it holds: the latent in another form (no code: the
    point of MLA is kept), only the newest chunk's latents (``kv-cache-not-appended``) or K and V (``mla-caches-kv``)."""
    wanted, held = list(truth.shape), cache_tensors(cache)
    if isinstance(cache, torch.Tensor):
        form = Ev("a tensor of shape {shape}", shape=list(cache.shape))
    elif isinstance(cache, (tuple, list, dict)):
        form = Ev("a {type} of {n} holding {shapes}", type=type(cache).__name__, n=len(cache), shapes=[list(t.shape) for t in held])
    elif cache is None:
        return outcome("fail", Ev("the cache is None, not the latent c_kv {wanted}", wanted=wanted))
    else:
        form = Ev("a {type}", type=type(cache).__name__)
    close = partial(torch.allclose, atol=1e-5 * max(1.0, truth.abs().max().item()), rtol=0)
    values = torch.cat([t.detach().double().flatten() for t in held]).sort().values if held else None
    if values is not None and values.shape == truth.flatten().shape and close(values, truth.flatten().sort().values):
        return outcome("fail", Ev("the cache holds the latent c_kv's values, but as {form}, not as c_kv {wanted}: "
                                  "the contract's cache is c_kv [B, P + n, d_latent]", form=form, wanted=wanted))  # fmt: skip
    newest = truth[:, -held[-1].shape[-2] :] if held and held[-1].dim() == 3 else None
    if newest is not None and held[-1].shape == newest.shape and close(held[-1].double(), newest):
        return outcome("fail", Ev("the cache holds the latents of the last {n} tokens only, not all {total}: new latents replace "
                                  "the cache instead of being appended", n=newest.shape[1], total=wanted[1]), "kv-cache-not-appended")  # fmt: skip
    if any(t.shape[-1] in (d_model, 2 * d_model) or (t.dim() >= 4 and t.shape[-1] == head_dim) for t in held):
        return outcome("fail", Ev("the cache is {form}, not the latent c_kv {wanted}: K and V cached instead?", form=form, wanted=wanted),
                       "mla-caches-kv")  # fmt: skip
    return outcome("fail", Ev("the cache is {form}, not the latent c_kv {wanted}", form=form, wanted=wanted))


class MlaTask(ModuleTask):
    def __init__(self):
        super().__init__("mla", causal=True)

    def init_args(self, d_model: int, n_heads: int) -> tuple:
        return (d_model, n_heads, latent_size(d_model))

    def build(self, ctx: Context, d_model: int, n_heads: int, dtype=torch.float32) -> Built:
        module = ctx.instantiate(self.init_args(d_model, n_heads), dtype)
        return Built(module, n_heads, find_mla_layout(module, d_model, latent_size(d_model)))

    def reference(self, built: Built, x, mask, dtype, variant=CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        return mla_reference(x.to(dtype), params, built.layout, built.n_heads, (x.shape[1],), variant)

    def layout_check(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("fail", Ev("unrecognised projection layout; accepted: {accepted}", accepted=ACCEPTED))
        return outcome("pass", built.layout.describe())

    def decode(self, ctx: Context, module, x, sizes):
        """(outputs, last cache) for x fed chunk by chunk, each call given the previous cache."""
        outs, cache, start = [], None, 0
        for n in sizes:
            ret = ctx.call(module, x[:, start : start + n].contiguous(), cache)
            if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and isinstance(ret[0], torch.Tensor)):
                raise WrongShape(Ev("forward(x, cache) returned {type}, not (out, cache)", type=type(ret).__name__))
            out, cache = ret
            expect_shape(out, (x.shape[0], n, x.shape[2]), Ev("output of a {n}-token step", n=n))
            outs.append(out)
            start += n
        return torch.cat(outs, dim=1), cache

    # --- checks ---------------------------------------------------------------

    def decode_check(self, ctx: Context, sizes, offset, batch_heads=(BASE[0], *BASE[2:])):
        """Chunks of ``sizes`` against the full causal forward, for (B, heads, head_dim) ``batch_heads``."""
        b, h, hd = batch_heads
        built = self.build(ctx, h * hd, h)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, (b, sum(sizes), h, hd), 1200 + offset, torch.float64)
        out, _ = self.decode(ctx, built.module, x.float(), sizes)
        truth, same = (self.reference(built, x, None, dtype) for dtype in (torch.float64, torch.float32))
        how = Ev("one token at a time") if set(sizes) == {1} else Ev("in chunks of {sizes} tokens", sizes=one_then_another(sizes))
        result = against_truth([(Ev("outputs decoded {how}", how=how), out, truth, same)])
        if batch_heads != (BASE[0], *BASE[2:]):
            result.message = drawn_heads_message(result.message, b, h, hd)
        return result

    def latent_cache_check(self, ctx: Context):
        """After chunks of 3 and 2 tokens the cache must be c_kv = W_dkv x of all 5, [B, 5, d_latent]."""
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, (BASE[0], 5, BASE[2], BASE[3]), 1250, torch.float64)
        _, cache = self.decode(ctx, built.module, x.float(), (3, 2))
        wanted = [BASE[0], 5, built.layout.d_latent]
        truth, same = (built.layout.latent(x.to(p), built.params(p)) for p in (torch.float64, torch.float32))
        if not isinstance(cache, torch.Tensor) or list(cache.shape) != wanted:
            return misshapen_cache(cache, truth, x.shape[-1], BASE[3])
        result = against_truth([(Ev("cache (c_kv = W_dkv x, after chunks of 3 and 2)"), cache, truth, same)])
        if result.status == "pass":
            result.message = Ev("the cache is the latent c_kv {wanted}: {what}", wanted=wanted, what=result.message)
        return result

    def chunk_leak_check(self, ctx: Context):
        """After 3 cached tokens, a 4-token chunk must still be causal inside itself."""
        built = self.build(ctx, 12, 3, torch.float64)
        x = ctx.randn(2, 7, 12, gen=ctx.generator(1300), dtype=torch.float64)
        base, _ = self.decode(ctx, built.module, x, (3, 4))
        leaks = []
        for j in range(4, 7):
            x2 = x.clone()
            x2[:, j] += 10.0
            change = moved(self.decode(ctx, built.module, x2, (3, 4))[0], base).amax(dim=0)
            leaks += [(i, j) for i in range(3, j) if change[i] > LEAK_THRESHOLD]
        if leaks:
            i, j = min(leaks)
            return outcome("fail", Ev("in a chunk after 3 cached tokens, position {i} changes when position {j} changes", i=i, j=j))
        return outcome("pass", Ev("inside a 4-token chunk after 3 cached tokens, no position sees a later one"))

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = super().checks(ctx)
        for n, (check_id, sizes) in enumerate(DECODE_CASES):
            defs.append(CheckDef(check_id, "numerical", partial(self.decode_check, ctx, sizes, n)))
        sizes, batch_heads = drawn_decode(ctx)
        defs.append(CheckDef("numerical.decode-drawn", "numerical", partial(self.decode_check, ctx, sizes, 3, batch_heads)))
        defs += [
            CheckDef("rules.cache-is-latent", "rules", partial(self.latent_cache_check, ctx)),
            CheckDef("mask-leak.decode-chunk", "mask-leak", partial(self.chunk_leak_check, ctx)),
        ]
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
        found = [(code, MlaVariant(base=v)) for code, v in super().hypotheses(ctx) if v.order in ((0, 1, 2), (0, 2, 1))]
        return found + [
            ("mla-scale-by-latent", MlaVariant(latent_scale=True)),
            ("mla-shared-up-projection", MlaVariant(shared="W_uk")),
            ("mla-shared-up-projection", MlaVariant(shared="W_uv")),
            ("causal-mask-missing", MlaVariant(base=replace(CORRECT, causal="none"))),
            ("kv-cache-mask-top-left", MlaVariant(align="top-left")),
            ("kv-cache-chunk-unmasked", MlaVariant(align="unmasked")),
            ("kv-cache-not-appended", MlaVariant(cache="overwrite")),
        ]


@dataclass(frozen=True)
class DecodeProbe:
    task: MlaTask
    built: Built
    x: torch.Tensor
    sizes: tuple[int, ...]

    def user(self, ctx: Context):
        return self.task.decode(ctx, self.built.module, self.x.clone(), self.sizes)[0]

    def expected(self, variant):
        return mla_reference(self.x, self.built.params(torch.float64), self.built.layout, self.built.n_heads, self.sizes, variant)


TASK = MlaTask()
