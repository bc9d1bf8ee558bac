"""The ``cross`` task: ``CrossAttention(d_model, n_heads)``, ``forward(x, context, context_mask=None)``.

Queries come from x [B, Tq, d], keys and values from context [B, Tk, d]; Tq != Tk in every
graded case so a swapped source cannot hide. The reference uses the module's own separate
projections (layouts.SEPARATE names); the diagnosis probes use Tq == Tk so that the
swapped-source hypothesis has the right shape to be compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import product

import torch

from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import Layout, find_layout
from drill.grade.reference import CORRECT, Variant, attention, merge_heads, split_heads
from drill.grade.checks.module import NO_LAYOUT, PROJECTION_HYPOTHESES, Built, instantiate
from drill.grade.checks.common import (
    mask_forms,
    deterministic_check,
    fully_masked_check,
    large_logits_verdict,
    no_mutation_check,
    padding_mask,
    random_mask,
)
from drill.text.messages import Ev

BASE = (2, 5, 7, 3, 4)  # B, Tq, Tk, H, head_dim
ACCEPTED = Ev("separate Linear(d_model, d_model) layers W_q, W_k, W_v with W_o; or q_proj, k_proj, v_proj with o_proj or out_proj")
SOURCES = tuple("".join(s) for s in product("xc", repeat=3))  # where q, k, v come from: every choice; xcc is correct


@dataclass(frozen=True)
class CrossVariant:
    base: Variant = CORRECT
    sources: str = "xcc"


def cross_attention(x, context, params, layout: Layout, n_heads: int, mask, variant: CrossVariant):
    base = variant.base
    projected = {"x": layout.project_qkv(x, params), "c": layout.project_qkv(context, params)}
    d = x.shape[-1]
    q, k, v = (split_heads(projected[src][i], n_heads, d // n_heads, base) for src, i in zip(variant.sources, base.order))
    out, _ = attention(q, k, v, mask, base, d_model=d)
    merged = merge_heads(out, base)
    return layout.project_out(merged, params) if base.out_proj else merged


class CrossTask:
    name = "cross"

    def build(self, ctx: Context, d_model: int, n_heads: int, dtype=torch.float32) -> Built:
        module = instantiate(ctx, (d_model, n_heads), dtype)
        layout = find_layout(module, d_model)
        return Built(module, n_heads, None if layout is None or layout.fused else layout)

    def forward(self, ctx: Context, module, x, context, mask=None):
        args = (x, context) if mask is None else (x, context, mask)
        return unpack(ctx.call(module, *args))[0]

    def reference(self, built: Built, x, context, mask, dtype, variant=CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        variant = variant if isinstance(variant, CrossVariant) else CrossVariant(variant)
        return cross_attention(x.to(dtype), context.to(dtype), params, built.layout, built.n_heads, mask, variant)

    def inputs(self, ctx: Context, config, offset, dtype=torch.float32):
        b, tq, tk, h, hd = config
        gen = ctx.generator(offset)
        x, context = (ctx.randn(b, t, h * hd, gen=gen, dtype=dtype) for t in (tq, tk))
        return x, context, random_mask((b, h, tq, tk), gen, ctx.device)

    # --- checks ---------------------------------------------------------------

    def layout_check(self, ctx: Context):
        built = self.build(ctx, BASE[3] * BASE[4], BASE[3])
        if built.layout is None:
            return outcome("fail", Ev("unrecognised projection layout; accepted: {accepted}", accepted=ACCEPTED))
        return outcome("pass", built.layout.describe())

    def shape_check(self, ctx: Context, config, non_contiguous):
        b, tq, tk, h, hd = config
        built = self.build(ctx, h * hd, h)
        gen = ctx.generator(1)
        if non_contiguous:
            x, context = (ctx.randn(t, b, h * hd, gen=gen).transpose(0, 1) for t in (tq, tk))
        else:
            x, context = (ctx.randn(b, t, h * hd, gen=gen) for t in (tq, tk))
        out = self.forward(ctx, built.module, x, context)
        problem = expect_like(out, (b, tq, h * hd), x)
        return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} (Tq={tq}, Tk={tk})", shape=list(out.shape), tq=tq, tk=tk))

    def numerical_check(self, ctx: Context, offset):
        b, tq, tk, h, hd = BASE
        built = self.build(ctx, h * hd, h)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, context, mask = self.inputs(ctx, BASE, 100 + offset, torch.float64)
        masks = {Ev("output"): None, Ev("key-padding-masked output"): padding_mask((tk, 2), tk, ctx.device), Ev("masked output"): mask}
        if offset == 0:  # every other form the contract allows: [Tq, Tk] and [B, 1, Tq, Tk]
            forms = dict(mask_forms(b, h, tq, tk, ctx.generator(160), ctx.device))
            shared, per_sample = forms["[Tq, Tk] mask"], forms["[B, 1, Tq, Tk] mask"]  # shown as is: mask_forms' keys
            masks |= {Ev("output with a [Tq, Tk] mask"): shared, Ev("output with a [B, 1, Tq, Tk] mask"): per_sample}
        pairs = []
        for label, m in masks.items():
            out = self.forward(ctx, built.module, x.float(), context.float(), m)
            truth, same = (self.reference(built, x, context, m, dt) for dt in (torch.float64, torch.float32))
            pairs.append((label, out, truth, same))
        return against_truth(pairs)

    def drawn_check(self, ctx: Context):
        """A module of heads and head_dim drawn from the seed, on B, Tq, Tk drawn too, with a random mask (every
        fixed numerical case builds 3 heads of 4, where a scale or a reshape hard-coded to head_dim 4 is right)."""
        config = b, tq, tk, h, hd = ctx.sizes(320, (1, 4), (2, 9), (2, 12), (1, 6), (2, 9), avoid=BASE[3:])
        built = self.build(ctx, h * hd, h)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, context, mask = self.inputs(ctx, config, 130, torch.float64)
        where = Ev("B={b}, Tq={tq}, Tk={tk}, {h} heads of {hd}, drawn from the seed", b=b, tq=tq, tk=tk, h=h, hd=hd)
        out = self.forward(ctx, built.module, x.float(), context.float(), mask)
        truth, same = (self.reference(built, x, context, mask, dt) for dt in (torch.float64, torch.float32))
        result = against_truth([(Ev("masked output ({where})", where=where), out, truth, same)])
        if result.status == "pass":
            result.message = Ev("{what} ({where})", what=result.message, where=where)
        return result

    def gradient_check(self, ctx: Context):
        built = self.build(ctx, BASE[3] * BASE[4], BASE[3])
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x64, c64, mask = self.inputs(ctx, BASE, 200, torch.float64)
        seed_grad = ctx.randn(*x64.shape, gen=ctx.generator(201), dtype=torch.float64)
        x, context = (t.float().requires_grad_() for t in (x64, c64))
        out = self.forward(ctx, built.module, x, context, mask)
        expect_shape(out, x.shape)
        ctx.call(lambda: (out * seed_grad.float()).sum().backward(), watch=False)
        grads = {}
        for precision in (torch.float64, torch.float32):
            leaves = [t.detach().clone().to(precision).requires_grad_() for t in (x64, c64)]
            params = built.params(precision, grad=True)
            (self.reference(built, *leaves, mask, precision, params=params) * seed_grad.to(precision)).sum().backward()
            grads[precision] = {"x": leaves[0].grad, "context": leaves[1].grad, **{n: p.grad for n, p in params.items()}}
        user = {"x": x.grad, "context": context.grad, **{n: p.grad for n, p in built.layout.params(built.module).items()}}
        pairs = []
        for name, truth in grads[torch.float64].items():
            if user[name] is None:
                return outcome("fail", Ev("no gradient reaches {name} (is it detached or unused?)", name=name))
            pairs.append((Ev("d{name}", name=name), user[name], truth, grads[torch.float32][name]))
        return against_truth(pairs)

    def padding_leak_check(self, ctx: Context):
        lengths, (b, tq, tk, h, hd) = (7, 1, 4), (3, 5, 7, 2, 4)
        built = self.build(ctx, h * hd, h, torch.float64)
        gen = ctx.generator(300)
        x, context = (ctx.randn(b, t, h * hd, gen=gen, dtype=torch.float64) for t in (tq, tk))
        mask = padding_mask(lengths, tk, ctx.device)
        base = self.forward(ctx, built.module, x, context, mask)
        expect_shape(base, x.shape)
        for s, n in enumerate(lengths):
            for j in range(n, tk):
                c2 = context.clone()
                c2[s, j] += 10 * ctx.randn(h * hd, gen=gen, dtype=torch.float64)
                change = moved(self.forward(ctx, built.module, x, c2, mask)[s], base[s])
                if (change > LEAK_THRESHOLD).any():
                    i = int((change > LEAK_THRESHOLD).nonzero()[0])
                    return outcome("fail", Ev("sample {s} (context length {n}): query {i} sees padded context position {j}", s=s, n=n, i=i, j=j))
        return outcome("pass", Ev("padded context positions (lengths 7, 1, 4) never reach an output"))

    def row_wise_check(self, ctx: Context):
        """out[t] may depend on x[t] only: queries never mix with each other."""
        b, tq, tk, h, hd = BASE
        built = self.build(ctx, h * hd, h, torch.float64)
        gen = ctx.generator(400)
        x, context = (ctx.randn(b, t, h * hd, gen=gen, dtype=torch.float64) for t in (tq, tk))
        base = self.forward(ctx, built.module, x, context)
        expect_shape(base, x.shape)
        for t in range(tq):
            x2 = x.clone()
            x2[:, t] += 10.0
            change = moved(self.forward(ctx, built.module, x2, context), base).amax(dim=0)  # [Tq]
            if change[t] <= LEAK_THRESHOLD:
                return outcome("fail", Ev("changing x[{t}] does not move out[{t}]: the queries do not come from x", t=t))
            others = [i for i in range(tq) if i != t and change[i] > LEAK_THRESHOLD]
            if others:
                return outcome("fail", Ev("changing x[{t}] moves out[{other}]: query rows must not mix", t=t, other=others[0]))
        return outcome("pass", Ev("perturbing x[t] moves out[t] and no other row"))

    def large_logits_check(self, ctx: Context):
        b, tq, tk, h, hd = BASE
        built = self.build(ctx, h * hd, h, torch.float64)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, context, _ = self.inputs(ctx, BASE, 600, torch.float64)
        params = built.params(torch.float64)
        q, k = built.layout.project_qkv(x, params)[0], built.layout.project_qkv(context, params)[1]
        typical = (q @ k.transpose(-2, -1)).abs().max().item() / hd**0.5
        scale = (2000 / max(typical, 1e-6)) ** 0.5  # logits grow with |x| * |context|
        big, big_context = x * scale, context * scale
        truth = self.reference(built, big, big_context, None, torch.float64)
        out = self.forward(ctx, built.module, big, big_context)
        return large_logits_verdict(out, truth, lambda: self.forward(ctx, built.module, x, context))

    def fully_masked(self, ctx: Context):
        built = self.build(ctx, BASE[3] * BASE[4], BASE[3])
        x, context, mask = self.inputs(ctx, BASE, 900)
        mask[0, :, 2] = False
        return fully_masked_check(ctx, lambda: self.forward(ctx, built.module, x, context, mask), (0, 2))

    def varying_length_check(self, ctx: Context):
        b, _, _, h, hd = BASE
        built = self.build(ctx, h * hd, h)
        for n, (tq, tk) in enumerate(((5, 7), (3, 2), (6, 4))):
            x, context, _ = self.inputs(ctx, (b, tq, tk, h, hd), 800 + n)
            out = self.forward(ctx, built.module, x, context)
            call = Ev("call {n} (Tq={tq}, Tk={tk})", n=n + 1, tq=tq, tk=tk)
            if built.layout is None:
                expect_shape(out, x.shape, call)
                continue
            truth, same = (self.reference(built, x, context, None, dt) for dt in (torch.float64, torch.float32))
            result = against_truth([(call, out, truth, same)])
            if result.status != "pass":
                return result
        return outcome("pass", Ev("calls with (Tq, Tk) = (5, 7), (3, 2), (6, 4) in a row all work"))

    def robustness_defs(self, ctx: Context) -> list[CheckDef]:
        def no_mutation():
            built = self.build(ctx, BASE[3] * BASE[4], BASE[3])
            x, context, mask = self.inputs(ctx, BASE, 1000)
            call = partial(self.forward, ctx, built.module, x, context, mask)
            return no_mutation_check(ctx, call, {"x": x, "context": context, "context_mask": mask})

        def deterministic():
            built = self.build(ctx, BASE[3] * BASE[4], BASE[3])
            x, context, mask = self.inputs(ctx, BASE, 1001)
            return deterministic_check(lambda: self.forward(ctx, built.module, x.clone(), context.clone(), mask))

        return [
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
            CheckDef("robustness.varying-length", "robustness", partial(self.varying_length_check, ctx)),
        ]

    def checks(self, ctx: Context) -> list[CheckDef]:
        shapes = (
            ("shape.base", BASE, False),
            ("shape.tq1", (3, 1, 6, 2, 5), False),
            ("shape.one-head", (2, 7, 3, 1, 6), False),
            ("shape.non-contiguous", BASE, True),
        )
        defs = [CheckDef("load.layout", "rules", partial(self.layout_check, ctx))]
        defs += [CheckDef(i, "shape", partial(self.shape_check, ctx, cfg, nc)) for i, cfg, nc in shapes]
        defs += [CheckDef(f"numerical.seed{i}", "numerical", partial(self.numerical_check, ctx, i)) for i in range(2)]
        defs.append(CheckDef("numerical.drawn", "numerical", partial(self.drawn_check, ctx)))
        defs += [
            CheckDef("gradient.x-context-and-weights", "gradient", partial(self.gradient_check, ctx)),
            CheckDef("mask-leak.padding", "mask-leak", partial(self.padding_leak_check, ctx)),
            CheckDef("mask-leak.row-wise", "mask-leak", partial(self.row_wise_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(self.large_logits_check, ctx)),
            CheckDef("stability.fully-masked-row", "stability", partial(self.fully_masked, ctx)),
        ]
        return defs + self.robustness_defs(ctx)

    # --- diagnosis --------------------------------------------------------------

    def probes(self, ctx: Context) -> list[Probe]:
        b, _, tk, h, hd = BASE
        try:
            built = self.build(ctx, h * hd, h, torch.float64)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.layout is None:
            return []
        x, context, mask = self.inputs(ctx, (b, tk, tk, h, hd), 1100, torch.float64)
        eye = torch.eye(tk, dtype=torch.bool, device=ctx.device)
        masks = (None, padding_mask((tk, 2), tk, ctx.device), mask[:, :1] | eye)
        return [Probe(self, built, x, context, m) for m in masks]

    def hypotheses(self, ctx: Context):
        found = [("cross-qkv-source-swapped", CrossVariant(sources=s)) for s in SOURCES if s != "xcc"]
        extra = (("mask-on-queries", Variant(mask="transposed")), ("k-v-swapped", Variant(order=(0, 2, 1))))
        found += [(code, CrossVariant(base)) for code, base in (*PROJECTION_HYPOTHESES, *extra)]
        return found


@dataclass(frozen=True)
class Probe:
    task: CrossTask
    built: Built
    x: torch.Tensor
    context: torch.Tensor
    mask: torch.Tensor | None

    def user(self, ctx: Context):
        mask = None if self.mask is None else self.mask.clone()
        return self.task.forward(ctx, self.built.module, self.x.clone(), self.context.clone(), mask)

    def expected(self, variant):
        return self.task.reference(self.built, self.x, self.context, self.mask, torch.float64, variant)


TASK = CrossTask()
