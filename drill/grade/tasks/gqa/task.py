"""The ``gqa`` task: ``GroupedQueryAttention(d_model, n_heads, n_kv_heads)``, ``forward(x, mask=None)``.

K and V have n_kv_heads heads; query head h reads kv head h // (n_heads // n_kv_heads), the
grouping of LLaMA's ``repeat_kv`` (``repeat_interleave`` on the head axis). The module
battery of the module engine (drill.grade.checks.module) runs on MQA (one kv head) and on 8 heads over 2 kv heads; extra
checks cover a 6-over-2 grouping, the MHA extreme (n_kv_heads == n_heads) and a grouping drawn from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from drill.grade.checks.compare import against_truth
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import SEPARATE, SEPARATE_OUT, Layout, is_linear
from drill.grade.reference import CORRECT, Variant, attention, merge_heads, split_heads
from drill.grade.checks.module import NO_LAYOUT, Built, ModuleTask, Probe, instantiate
from drill.grade.checks.common import large_logits_verdict, padding_mask, random_mask
from drill.text.messages import Ev

# kv heads for the head counts the inherited module checks use: MQA, and 8 over 2 for "eight-heads".
KV_HEADS = {1: 1, 2: 1, 3: 1, 8: 2}
GQA = (2, 5, 6, 4)  # (B, T, H, head_dim) graded with 2 kv heads: groups of 3
ACCEPTED = Ev(
    "separate Linear layers q_proj, k_proj, v_proj with o_proj or out_proj, W_q, W_k, W_v with W_o, or wq, wk, wv with wo "
    "(bias optional); q_proj and o_proj are d_model x d_model, k_proj and v_proj d_model -> n_kv_heads * head_dim"
)


@dataclass(frozen=True)
class GqaVariant:
    base: Variant = CORRECT
    mapping: str = "interleave"  # interleave: head h reads kv head h // g; repeat: h % n_kv_heads (the bug)


@dataclass(frozen=True)
class GqaBuilt(Built):
    n_kv: int = 1


def find_gqa_layout(module: nn.Module, d_model: int, kv_width: int) -> Layout | None:
    """Separate projections only: a fused layout cannot be split without knowing n_kv_heads."""

    def linear(name, out_features):
        return is_linear(getattr(module, name, None), d_model, out_features)

    for q, k, v in SEPARATE:
        if linear(q, d_model) and linear(k, kv_width) and linear(v, kv_width):
            out = next((o for o in SEPARATE_OUT[(q, k, v)] if linear(o, d_model)), None)
            if out:
                return Layout((q, k, v), out)
    return None


def gqa_attention(x, params, layout: Layout, n_heads: int, n_kv: int, mask, variant: GqaVariant):
    d = x.shape[-1]
    hd, group, base = d // n_heads, n_heads // n_kv, variant.base
    projected = layout.project_qkv(x, params)
    q, k, v = (projected[i] for i in base.order)

    def share(z):  # [B, T, n_kv * hd] -> [B, n_heads, T, hd]
        z = split_heads(z, n_kv, hd, base)
        return z.repeat_interleave(group, dim=1) if variant.mapping == "interleave" else z.repeat(1, group, 1, 1)

    out, _ = attention(split_heads(q, n_heads, hd, base), share(k), share(v), mask, base, d_model=d)
    merged = merge_heads(out, base)
    return layout.project_out(merged, params) if base.out_proj else merged


def drawn_grouping(ctx: Context) -> tuple[tuple[int, int, int, int], int]:
    """((B, T, H, head_dim), n_kv_heads) drawn from the seed: groups of 2 to 4 over 1 to 3 kv heads, and B, T and
    head_dim (never the fixed checks' 4) distinct from H."""
    n_kv, group = ctx.sizes(320, (1, 3), (2, 4))
    b, t, hd = ctx.sizes(321, (1, 4), (2, 12), (2, 9), avoid=(n_kv * group, GQA[3]))
    return (b, t, n_kv * group, hd), n_kv


class GqaTask(ModuleTask):
    roles = ("d_model", "n_heads", "n_kv_heads")

    def __init__(self):
        super().__init__("gqa", causal=False)

    def init_args(self, d_model: int, n_heads: int) -> tuple:
        return (d_model, n_heads, KV_HEADS[n_heads])

    def build(self, ctx: Context, d_model: int, n_heads: int, dtype=torch.float32, n_kv: int | None = None) -> GqaBuilt:
        n_kv = n_kv or KV_HEADS[n_heads]
        module = instantiate(ctx, (d_model, n_heads, n_kv), dtype, ("d_model", "n_heads", "n_kv_heads"))
        layout = find_gqa_layout(module, d_model, n_kv * (d_model // n_heads))
        return GqaBuilt(module, n_heads, layout, n_kv)

    def reference(self, built: GqaBuilt, x, mask, dtype, variant=CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        variant = variant if isinstance(variant, GqaVariant) else GqaVariant(variant)
        return gqa_attention(x.to(dtype), params, built.layout, built.n_heads, built.n_kv, mask, variant)

    def layout_check(self, ctx: Context):
        b, t, h, hd = GQA
        built = self.build(ctx, h * hd, h, n_kv=2)
        if built.layout is None:
            return outcome("fail", Ev("unrecognised projection layout; accepted: {accepted}", accepted=ACCEPTED))
        return outcome("pass", built.layout.describe())

    def grouped_check(self, ctx: Context, config, n_kv: int, offset: int):
        """float32 against float64, unmasked and masked, for one (n_heads, n_kv_heads) pair."""
        b, t, h, hd = config
        built = self.build(ctx, h * hd, h, torch.float32, n_kv)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, mask = self.inputs(ctx, config, 150 + offset, torch.float64)
        pairs = []
        for m in (None, mask):
            out = self.forward(ctx, built.module, x.float(), m)
            truth, same = (self.reference(built, x, m, dt) for dt in (torch.float64, torch.float32))
            pairs.append((Ev("output") if m is None else Ev("masked output"), out, truth, same))
        result = against_truth(pairs)
        result.message = Ev("{what} ({h} query heads, {kv} kv heads)", what=result.message, h=h, kv=n_kv)
        return result

    def large_logits_check(self, ctx: Context):
        b, t, h, hd = GQA
        built = self.build(ctx, h * hd, h, torch.float64, n_kv=2)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, GQA, 600, torch.float64)
        q, k, _ = built.layout.project_qkv(x, built.params(torch.float64))
        typical = (q[..., :hd] @ k[..., :hd].transpose(-2, -1)).abs().max().item() / hd**0.5  # head 0, kv head 0
        big = x * (2000 / max(typical, 1e-6)) ** 0.5  # logits grow with the square of x
        truth = self.reference(built, big, None, torch.float64)
        return large_logits_verdict(self.forward(ctx, built.module, big), truth, lambda: self.forward(ctx, built.module, x))

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = super().checks(ctx)
        extra = [
            CheckDef("numerical.gqa-6-over-2", "numerical", partial(self.grouped_check, ctx, GQA, 2, 0)),
            CheckDef("numerical.mha-extreme", "numerical", partial(self.grouped_check, ctx, (2, 5, 3, 4), 3, 1)),
            CheckDef("numerical.mqa-extreme", "numerical", partial(self.grouped_check, ctx, (3, 4, 5, 2), 1, 2)),
            CheckDef("numerical.drawn", "numerical", partial(self.grouped_check, ctx, *drawn_grouping(ctx), 3)),
        ]
        return defs[:1] + extra + defs[1:]

    def probes(self, ctx: Context) -> list[Probe]:
        b, t, h, hd = GQA
        try:
            built = self.build(ctx, h * hd, h, torch.float64, n_kv=2)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.layout is None:
            return []
        gen = ctx.generator(1100)
        x = ctx.randn(b, t, h * hd, gen=gen, dtype=torch.float64)
        eye = torch.eye(t, dtype=torch.bool, device=ctx.device)
        masks = (None, padding_mask((t, 2), t, ctx.device), random_mask((b, 1, t, t), gen, ctx.device) | eye)
        return [Probe(self, built, x, m) for m in masks]

    def hypotheses(self, ctx: Context):
        found = [("gqa-head-mapping", GqaVariant(mapping="repeat"))]
        for code, variant in super().hypotheses(ctx):
            if variant.order in ((0, 1, 2), (0, 2, 1)):  # q and k/v widths differ: other orders cannot run
                found.append((code, GqaVariant(variant)))
        return found


TASK = GqaTask()
