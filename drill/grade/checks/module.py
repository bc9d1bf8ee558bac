"""The engine of every module task (mha, causal and the tasks built on them): an nn.Module graded
against a reference built from its own weights. A task folder makes its task an instance or a
subclass of :class:`ModuleTask`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import permutations

import torch
from torch import nn

from drill.grade.checks.common import (
    deterministic_check,
    dtype_id,
    fully_masked_check,
    jacobian_check,
    large_logits_verdict,
    mask_forms,
    no_mutation_check,
    padding_mask,
    random_mask,
)
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.checks.conventions import CONFIG, Plan, contract_text, plan
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import ACCEPTED, Layout, find_layout
from drill.grade.reference import CORRECT, Variant, causal_mask, module_attention
from drill.grade.remote import Abort, UserCodeError
from drill.text.messages import Ev

MAX_SEQ_LEN = 16
# (B, T, H, head_dim): no two equal within a case, heads from 1 to 8.
BASE = (2, 5, 3, 4)
SHAPE_CASES = (
    ("shape.base", BASE, False),
    ("shape.t1", (3, 1, 2, 5), False),
    ("shape.one-head", (2, 7, 1, 6), False),
    ("shape.eight-heads", (3, 4, 8, 2), False),
    ("shape.non-contiguous", BASE, True),
)
NO_LAYOUT = Ev("skipped: no reference without a recognised projection layout")


@dataclass(frozen=True)
class Built:
    """A fresh user module with its config and, when recognised, its projection layout."""

    module: nn.Module
    n_heads: int
    layout: Layout | None

    def params(self, dtype, grad=False):
        return {
            name: p.detach().clone().to(dtype).requires_grad_(grad) for name, p in self.layout.params(self.module).items()
        }


CONTRACT_ROLES = ("d_model", "n_heads", "max_seq_len")


def signatures(ctx: Context) -> dict:
    """The user's constructor and forward signatures (asked once per grade; None where there is none)."""
    cached = vars(ctx).get("_signatures")
    if cached is None:
        cached = {"init": ctx.user.signature(ctx.entry), "forward": ctx.user.signature(ctx.entry, "forward")}
        vars(ctx)["_signatures"] = cached
    return cached


def call_plan(ctx: Context, args: tuple, roles=None) -> Plan:
    """How to build ``entry`` for the contract's ``args`` (d_model, n_heads, ...) in the user's own convention."""
    sigs = signatures(ctx)
    values = dict(zip(roles or CONTRACT_ROLES, args))
    return plan(*(sigs[k]["params"] if sigs[k] else None for k in ("init", "forward")), values)


def instantiate(ctx: Context, args: tuple, dtype, roles=None) -> nn.Module:
    """The user's module for the contract's ``args``, seeded by ``ctx.seed``, on the device in ``dtype``, in eval
    mode (built on the user side): positionally, by parameter name, or from a config object (see conventions)."""
    how = call_plan(ctx, args, roles)
    return ctx.user.instantiate(ctx.entry, how.args, seed=ctx.seed, device=ctx.device, dtype=dtype, kwargs=how.kwargs)


def self_attention_args(ctx: Context, x, mask):
    """forward's arguments: (x[, mask]), or (x, x, x, mask) for forward(query, key, value, mask), whose masks
    carry no head axis (the Annotated Transformer unsqueezes one itself)."""
    if not call_plan(ctx, (1, 1)).qkv_forward:
        return (x,) if mask is None else (x, mask)
    return (x, x, x, without_head_axis(mask))


def without_head_axis(mask):
    if mask is None:
        return None
    if mask.dim() == 4 and mask.shape[1] == 1:
        return mask[:, 0]
    if mask.dim() == 2:
        return mask[None]
    return mask


# The classic mistakes of any module built from Q/K/V projections, as reference variants.
PROJECTION_HYPOTHESES = (
    ("scale-missing", Variant(scale="none")),
    ("scale-by-d", Variant(scale="d")),
    ("scale-by-d-model", Variant(scale="sqrt-model")),
    ("scale-by-d-model", Variant(scale="model")),
    ("softmax-wrong-dim", Variant(softmax_dim=-2)),
    ("softmax-wrong-dim", Variant(softmax_dim=1)),  # hard-coded for [B, T, T]: over the heads of [B, H, T, T]
    ("heads-split-without-transpose", Variant(split=False)),
    ("heads-merge-without-transpose", Variant(merge=False)),
    ("missing-output-projection", Variant(out_proj=False)),
    ("mask-inverted", Variant(mask="inverted")),
    ("mask-after-softmax", Variant(mask="after-softmax")),
    ("mask-ignored", Variant(mask="ignored")),
)


class ModuleTask:
    def __init__(self, name: str, causal: bool):
        self.name = name
        self.causal = causal

    # --- running the user's module and the reference -------------------------

    def init_args(self, d_model: int, n_heads: int) -> tuple:
        """The constructor's arguments (a subclass task may take others)."""
        return (d_model, n_heads, MAX_SEQ_LEN) if self.causal else (d_model, n_heads)

    roles = CONTRACT_ROLES  # what init_args' values are, by position

    @property
    def forward_contract(self) -> str:
        return "x" if self.causal else "x, mask=None"

    def build(self, ctx: Context, d_model: int, n_heads: int, dtype=torch.float32) -> Built:
        module = instantiate(ctx, self.init_args(d_model, n_heads), dtype, self.roles)
        return Built(module, n_heads, find_layout(module, d_model))

    def forward(self, ctx: Context, module, x, mask=None):
        return unpack(ctx.call(module, *self_attention_args(ctx, x, None if self.causal else mask)))[0]

    def reference(self, built: Built, x, mask, dtype, variant: Variant = CORRECT, params=None):
        params = params if params is not None else built.params(dtype)
        return module_attention(x.to(dtype), params, built.layout, built.n_heads, mask, self.causal, variant)[0]

    def inputs(self, ctx: Context, config, offset, dtype=torch.float32):
        b, t, h, hd = config
        gen = ctx.generator(offset)
        x = ctx.randn(b, t, h * hd, gen=gen, dtype=dtype)
        mask = None if self.causal else random_mask((b, 1, t, t), gen, ctx.device)
        return x, mask

    # --- checks ---------------------------------------------------------------

    forward_required = 1  # positional arguments every call of forward passes

    def contract_check(self, ctx: Context):
        """Build the module the contract's way (or the user's convention): a signature that does not fit
        is said once, with both signatures, and ends the grade (every other check would fail the same way)."""
        how = call_plan(ctx, self.init_args(BASE[2] * BASE[3], BASE[2]), self.roles)
        try:
            self.build(ctx, BASE[2] * BASE[3], BASE[2])
        except UserCodeError as exc:
            text = str(exc)
            signature = text.startswith("raised TypeError") and "argument" in text  # shown as is: a pattern, never shown
            config = how.style == CONFIG and text.startswith("raised AttributeError") and "SimpleNamespace" in text  # shown as is
            if signature or config:
                error = exc.args[0] if exc.args else text  # the user side's message, an Ev where it is one
                if config:
                    fields = ", ".join(k for k, _ in how.args[0].fields)
                    detail = Ev("building it {how} {error} (the config carries {fields})", how=how.style_call(), error=error, fields=fields)
                else:
                    detail = Ev("building it {how} {error}", how=how.style_call(), error=error)
                raise contract_mismatch(ctx, self, detail) from None
            raise
        fwd = signatures(ctx)["forward"]
        if fwd:
            allowed = 3 if how.qkv_forward else self.forward_required
            positional = [p for p in fwd["params"] if p[1] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
            required = [p[0] for p in fwd["params"] if not p[2] and p[1] != "VAR_POSITIONAL" and p[1] != "VAR_KEYWORD"]
            takes = len(positional) + sum(p[1] == "VAR_POSITIONAL" for p in fwd["params"]) * 99
            if len(required) > allowed or takes < allowed:
                needs = Ev("forward requires {names}", names=", ".join(required)) if required else Ev("forward requires nothing")
                raise contract_mismatch(ctx, self, needs)
        init = signatures(ctx)["init"]["text"] if signatures(ctx)["init"] else ctx.user.entry_name
        return outcome("pass", Ev("{init} built {how}", init=init, how=how.describe()))

    def layout_check(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("fail", Ev("unrecognised projection layout; accepted: {accepted}", accepted=ACCEPTED))
        return outcome("pass", built.layout.describe())

    def shape_check(self, ctx: Context, config, non_contiguous):
        b, t, h, hd = config
        built = self.build(ctx, h * hd, h)
        gen = ctx.generator(1)
        x = ctx.randn(t, b, h * hd, gen=gen).transpose(0, 1) if non_contiguous else ctx.randn(b, t, h * hd, gen=gen)
        out = self.forward(ctx, built.module, x)
        problem = expect_like(out, (b, t, h * hd), x)
        return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape} (H={h})", shape=list(out.shape), h=h))

    def numerical_check(self, ctx: Context, dtype, offset):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2], dtype)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        b, t = ctx.sizes(300 + offset, (1, 6), (2, 16), avoid=BASE[2:])  # H and head_dim are the built module's
        pairs = []
        for config in (BASE, (b, t, *BASE[2:])):  # the fixed shape, then B and T drawn from the seed
            x, mask = self.inputs(ctx, config, 100 + offset, torch.float64)
            for m in (None, mask) if mask is not None else (None,):
                out = self.forward(ctx, built.module, x.to(dtype), m)
                truth = self.reference(built, x, m, torch.float64)
                same = self.reference(built, x, m, dtype)
                label = Ev("output") if m is None else Ev("masked output")
                if config != BASE:
                    label = Ev("{label} at B={b}, T={t}", label=label, b=b, t=t)
                pairs.append((label, out, truth, same))
        return against_truth(pairs)

    def mask_forms_check(self, ctx: Context):
        """Each mask form the contract allows, per-head masks included, against the reference."""
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        b, t, h, _ = BASE
        x, _ = self.inputs(ctx, BASE, 150, torch.float64)
        qkv = call_plan(ctx, (1, 1)).qkv_forward
        pairs, skipped = [], []
        for label, mask in mask_forms(b, h, t, t, ctx.generator(151), ctx.device):
            if qkv and mask is not None and mask.dim() == 4 and mask.shape[1] != 1:
                skipped.append(label)  # forward(query, key, value, mask) adds the head axis itself
                continue
            out = self.forward(ctx, built.module, x.float(), mask)
            truth, same = (self.reference(built, x, mask, dt) for dt in (torch.float64, torch.float32))
            label = Ev("output with a {label}", label=label) if mask is not None else Ev("output with no mask")
            pairs.append((label, out, truth, same))
        result = against_truth(pairs)
        if result.status == "pass" and skipped:
            result.message = Ev("{n} mask forms: {what}; skipped {forms}: forward(query, key, value, mask) adds the head axis",
                                n=len(pairs), what=result.message, forms=Ev.seq(skipped, ", "))  # fmt: skip
        elif result.status == "pass":
            result.message = Ev("{n} mask forms: {what}", n=len(pairs), what=result.message)
        return result

    def gradient_check(self, ctx: Context, dtype):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2], dtype)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x64, mask = self.inputs(ctx, BASE, 200, torch.float64)
        seed_grad = ctx.randn(*x64.shape, gen=ctx.generator(201), dtype=torch.float64)
        x = x64.to(dtype).requires_grad_()
        out = self.forward(ctx, built.module, x, mask)
        expect_shape(out, x.shape)
        ctx.call(lambda: (out * seed_grad.to(out.dtype)).sum().backward(), watch=False)
        grads = {}
        for precision in (torch.float64, dtype):
            leaf = x64.detach().clone().to(precision).requires_grad_()
            params = built.params(precision, grad=True)
            ref_out = self.reference(built, leaf, mask, precision, params=params)
            (ref_out * seed_grad.to(precision)).sum().backward()
            grads[precision] = {"x": leaf.grad, **{n: p.grad for n, p in params.items()}}
        user = {"x": x.grad, **dict(built.layout.params(built.module))}
        pairs = []
        for name, truth in grads[torch.float64].items():
            grad = user[name] if name == "x" else user[name].grad
            if grad is None:
                return outcome("fail", Ev("no gradient reaches {name} (is it detached or unused?)", name=name))
            pairs.append((Ev("d{name}", name=name), grad, truth, grads[dtype][name]))
        return against_truth(pairs)

    def padding_leak_check(self, ctx: Context):
        lengths, t, h, hd = (5, 1, 3), 5, 2, 4  # B=3, T=5, H=2, head_dim=4
        built = self.build(ctx, h * hd, h, torch.float64)
        gen = ctx.generator(300)
        x = ctx.randn(3, t, h * hd, gen=gen, dtype=torch.float64)
        mask = padding_mask(lengths, t, ctx.device)
        base = self.forward(ctx, built.module, x, mask)
        expect_shape(base, x.shape)
        for b, n in enumerate(lengths):
            for j in range(n, t):
                x2 = x.clone()
                x2[b, j] += 10 * ctx.randn(h * hd, gen=gen, dtype=torch.float64)
                change = moved(self.forward(ctx, built.module, x2, mask)[b], base[b])[:n]
                if (change > LEAK_THRESHOLD).any():
                    i = int((change > LEAK_THRESHOLD).nonzero()[0])
                    return outcome("fail", Ev("sample {b} (length {n}): position {i} sees padded position {j}", b=b, n=n, i=i, j=j))
        return outcome("pass", Ev("padded positions (lengths 5, 1, 3) never reach a real position"))

    def future_leak_check(self, ctx: Context):
        built = self.build(ctx, 12, 3, torch.float64)
        x = ctx.randn(2, 6, 12, gen=ctx.generator(400), dtype=torch.float64)
        mask = None if self.causal else causal_mask(6, device=ctx.device)
        base = self.forward(ctx, built.module, x, mask)
        expect_shape(base, x.shape)
        leaks = []
        for j in range(1, 6):
            x2 = x.clone()
            x2[:, j] += 10.0
            change = moved(self.forward(ctx, built.module, x2, mask), base).amax(dim=0)
            leaks += [(i, j) for i in range(j) if change[i] > LEAK_THRESHOLD]
        if leaks:
            i, j = min(leaks)
            return outcome("fail", Ev("position {i} changes when future position {j} changes", i=i, j=j))
        return outcome("pass", Ev("perturbing future tokens never moves earlier outputs"))

    def module_jacobian_check(self, ctx: Context):
        built = self.build(ctx, 12, 3, torch.float64)
        x = ctx.randn(2, 6, 12, gen=ctx.generator(500), dtype=torch.float64).requires_grad_()
        mask = None if self.causal else causal_mask(6, device=ctx.device)
        return jacobian_check(ctx, lambda z: self.forward(ctx, built.module, z, mask), x)

    def large_logits_check(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2], torch.float64)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, _ = self.inputs(ctx, BASE, 600, torch.float64)
        params = built.params(torch.float64)
        q, k, _ = built.layout.project_qkv(x, params)
        typical = (q @ k.transpose(-2, -1)).abs().max().item() / BASE[3] ** 0.5
        big = x * (2000 / max(typical, 1e-6)) ** 0.5  # logits grow with the square of x
        truth = self.reference(built, big, None, torch.float64)
        return large_logits_verdict(self.forward(ctx, built.module, big), truth, lambda: self.forward(ctx, built.module, x))

    def varying_length_check(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        for n, t in enumerate((5, 7, 3)):
            x, _ = self.inputs(ctx, (2, t, BASE[2], BASE[3]), 800 + n)
            out = self.forward(ctx, built.module, x)
            label = Ev("call {n} (T={t})", n=n + 1, t=t)
            if built.layout is None:
                expect_shape(out, x.shape, label)
                continue
            truth, same = (self.reference(built, x, None, dt) for dt in (torch.float64, x.dtype))
            result = against_truth([(label, out, truth, same)])
            if result.status != "pass":
                return result
        if built.layout is None:
            return outcome("pass", Ev("calls with T = 5, 7, 3 in a row all work (shapes only)"))
        return outcome("pass", Ev("calls with T = 5, 7, 3 in a row all work"))

    def fully_masked(self, ctx: Context):
        built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
        x, mask = self.inputs(ctx, BASE, 900)
        mask[0, 0, 2] = False
        return fully_masked_check(ctx, lambda: self.forward(ctx, built.module, x, mask), (0, 2))

    def robustness_defs(self, ctx: Context) -> list[CheckDef]:
        def no_mutation():
            built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
            x, mask = self.inputs(ctx, BASE, 1000)
            named = {"x": x} if mask is None else {"x": x, "mask": mask}
            return no_mutation_check(ctx, lambda: self.forward(ctx, built.module, x, mask), named)

        def deterministic():
            built = self.build(ctx, BASE[2] * BASE[3], BASE[2])
            x, mask = self.inputs(ctx, BASE, 1001)
            return deterministic_check(lambda: self.forward(ctx, built.module, x.clone(), mask))

        return [
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
            CheckDef("robustness.varying-length", "robustness", partial(self.varying_length_check, ctx)),
        ]

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [CheckDef("load.contract", "rules", partial(self.contract_check, ctx)),
                CheckDef("load.layout", "rules", partial(self.layout_check, ctx))]  # fmt: skip
        defs += [CheckDef(i, "shape", partial(self.shape_check, ctx, cfg, nc)) for i, cfg, nc in SHAPE_CASES]
        for dtype in ctx.dtypes:
            defs += [
                CheckDef(f"{dtype_id('numerical', dtype)}.seed{i}", "numerical", partial(self.numerical_check, ctx, dtype, i))
                for i in range(3)
            ]
            grad_id = f"{dtype_id('gradient', dtype)}.x-and-weights"
            defs.append(CheckDef(grad_id, "gradient", partial(self.gradient_check, ctx, dtype)))
        if not self.causal:
            defs.append(CheckDef("numerical.mask-forms", "numerical", partial(self.mask_forms_check, ctx)))
            defs.append(CheckDef("mask-leak.padding", "mask-leak", partial(self.padding_leak_check, ctx)))
        defs += [
            CheckDef("mask-leak.future", "mask-leak", partial(self.future_leak_check, ctx)),
            CheckDef("mask-leak.jacobian", "mask-leak", partial(self.module_jacobian_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(self.large_logits_check, ctx)),
        ]
        if not self.causal:
            defs.append(CheckDef("stability.fully-masked-row", "stability", partial(self.fully_masked, ctx)))
        return defs + self.robustness_defs(ctx)

    # --- diagnosis --------------------------------------------------------------

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = self.build(ctx, BASE[2] * BASE[3], BASE[2], torch.float64)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.layout is None:
            return []
        x, mask = self.inputs(ctx, BASE, 1100, torch.float64)
        if self.causal:
            masks = (None,)
        else:
            masks = (None, padding_mask((5, 2), BASE[1], ctx.device), mask | torch.eye(BASE[1], dtype=torch.bool, device=ctx.device))
        return [Probe(self, built, x, m) for m in masks]

    def hypotheses(self, ctx: Context):
        # A causal module's only mask is its own: ignoring it is causal-mask-missing, not mask-ignored.
        found = [h for h in PROJECTION_HYPOTHESES if not (self.causal and h[0] == "mask-ignored")]
        if self.causal:
            found += [
                ("causal-mask-missing", Variant(causal="none")),  # never built, flag ignored, or masked_fill discarded
                ("causal-off-by-one", Variant(causal=1)),
                ("causal-blocks-self", Variant(causal=-1)),
                ("causal-transposed", Variant(causal="triu")),
            ]
        else:
            found.append(("mask-on-queries", Variant(mask="transposed")))
        for order in permutations(range(3)):
            if order != (0, 1, 2):
                found.append(("k-v-swapped" if order == (0, 2, 1) else "qkv-order", Variant(order=order)))
        return found


ACCEPTED_STYLES = Ev(
    "also accepted: parameters by name (embed_dim/hidden_size/n_embd, num_heads/n_head/h, block_size, dropout, ...), "
    "one config object (nanoGPT: n_embd, n_head, block_size, dropout, bias; Hugging Face: hidden_size, "
    "num_attention_heads, num_key_value_heads), and forward(query, key, value, mask)"
)


def contract_mismatch(ctx: Context, task: ModuleTask, detail: Ev) -> Abort:
    """One failing check that says what the task calls and what the file defines, then ends the grade."""
    sigs = signatures(ctx)
    entry = ctx.user.entry_name
    init = sigs["init"]["text"] if sigs["init"] else f"{entry}(?)"
    forward = sigs["forward"]["text"].split(".", 1)[-1] if sigs["forward"] else "forward(?)"
    values = task.roles[: len(task.init_args(BASE[2] * BASE[3], BASE[2]))]
    expected = contract_text(entry, values, task.forward_contract)
    message = Ev("{entry} does not fit the {task} contract: expected {expected}; your file defines {init} with {forward}; "
                 "{detail} ({styles})", entry=entry, task=task.name, expected=expected, init=init, forward=forward,
                 detail=detail, styles=ACCEPTED_STYLES)  # fmt: skip
    abort = Abort("load.contract", message, "fail")
    abort.check.category, abort.check.codes = "rules", ["contract-mismatch"]
    return abort


@dataclass(frozen=True)
class Probe:
    task: ModuleTask
    built: Built
    x: torch.Tensor
    mask: torch.Tensor | None

    def user(self, ctx: Context):
        mask = None if self.mask is None else self.mask.clone()
        return self.task.forward(ctx, self.built.module, self.x.clone(), mask)

    def expected(self, variant: Variant):
        return self.task.reference(self.built, self.x, self.mask, torch.float64, variant)
