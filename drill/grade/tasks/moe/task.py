"""The ``moe`` task: ``class MoE(nn.Module)``, ``__init__(d_model, d_ff, n_experts, top_k)``, ``forward(x) -> (y, aux_loss)``.

Mixtral routing (softmax over each token's top-k router logits, ``y = Σ weight·expert(x)``) and the
Switch Transformer load-balancing loss ``n_experts·Σ f_i·P_i``. The experts are the user's own
modules, whatever their inside: the judge calls them remotely (``experts.i`` through the user side's
``attr`` op) on every token and builds the reference from their outputs and the router's weight, so
only routing and combination are judged. The module is built twice from the same seed, in float32
(graded) and float64 (the truth, from the same float32-rounded parameters). Inputs are drawn so that
every token's top-k set and top-1 expert win by a margin no float32 rounding can cross.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import deterministic_check, no_mutation_check
from drill.grade.checks.compare import FLOAT32_NOTE, LEAK_THRESHOLD, against_truth, expect_shape, first_nonfinite, shown
from drill.grade.checks.rows import row_independence_check
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.layouts import is_linear
from drill.grade.tolerance import property_allowed
from drill.grade.user.wire import Handle
from drill.text.messages import Ev

D, D_FF, E, K = 6, 8, 4, 2
X = (2, 5, D)
MARGIN = 0.05
NO_LAYOUT = Ev("skipped: no reference without a router (or gate) nn.Linear and an experts ModuleList")


@dataclass(frozen=True)
class MoEVariant:
    weights: str = "topk"  # topk (correct): softmax over the top-k logits | full: softmax over all, not renormalised
    #                        raw: the top-k logits themselves | tokens: softmax over the tokens
    dense: str = "none"  # none (correct) | softmax: every expert, weighted by the full softmax | sum: every expert, unweighted
    aux: str = "switch"  # switch (correct) | counts: n Σ f_i² | topk: f over all top-k choices (Hugging Face Mixtral)


CORRECT_MOE = MoEVariant()


def reference(x, router_w, expert_outs, k: int, variant: MoEVariant = CORRECT_MOE):
    """(y [N, d], aux) from tokens ``x [N, d]``, the router weight and every expert's output ``[E, N, d]``."""
    n_exp = router_w.shape[0]
    logits = x @ router_w.T
    probs = torch.softmax(logits, dim=-1)
    top, idx = logits.topk(k, dim=-1)
    if variant.dense == "softmax":
        y = torch.einsum("ne,end->nd", probs, expert_outs)
    elif variant.dense == "sum":
        y = expert_outs.sum(dim=0)
    else:
        weights = {"topk": lambda: torch.softmax(top, dim=-1), "full": lambda: probs.gather(-1, idx),
                   "raw": lambda: top, "tokens": lambda: torch.softmax(top, dim=0)}[variant.weights]()  # fmt: skip
        chosen = expert_outs.permute(1, 0, 2).gather(1, idx[..., None].expand(-1, -1, x.shape[-1]))  # [N, k, d]
        y = (weights[..., None] * chosen).sum(dim=1)
    if variant.aux == "topk":
        f = F.one_hot(idx, n_exp).to(x.dtype).mean(dim=0)  # [k, E]
        aux = n_exp * (f * probs.mean(dim=0)).sum()
    else:
        f = F.one_hot(idx[:, 0], n_exp).to(x.dtype).mean(dim=0)
        aux = n_exp * (f * (f if variant.aux == "counts" else probs.mean(dim=0))).sum()
    return y, aux


@dataclass
class Built:
    module: object
    router: str | None  # router or gate
    n_experts: int
    top_k: int

    @property
    def ok(self) -> bool:
        return self.router is not None

    def router_weight(self, dtype=torch.float64):
        return getattr(self.module, self.router).weight.detach().to(dtype)

    def expert_outputs(self, ctx: Context, x2d):
        """[E, N, d]: each of the user's experts on every token (their own code, on the user side)."""
        outs = []
        for i in range(self.n_experts):
            expert = ctx.user.attribute(self.module, f"experts.{i}")
            if not isinstance(expert, Handle):
                raise WrongShape(Ev("experts[{i}] is not a module", i=i))
            out = ctx.call(expert, x2d)
            out = out[0] if isinstance(out, (tuple, list)) and out else out
            if not isinstance(out, torch.Tensor):
                raise WrongShape(Ev("experts[{i}] returned {type}, not a tensor", i=i, type=type(out).__name__))
            expect_shape(out, x2d.shape, Ev("experts[{i}]'s output (d_model -> d_model)", i=i))
            outs.append(out)
        return torch.stack(outs)


def find_router(module, d: int, n_exp: int):
    experts = getattr(module, "experts", None)
    if experts is None or type(experts).__name__ != "ModuleList" or len(experts) != n_exp:
        return None
    for name in ("router", "gate"):
        layer = getattr(module, name, None)
        if is_linear(layer, d, n_exp) and layer.bias is None:
            return name
    return None


def build(ctx: Context, dtype=torch.float32, n_exp: int = E, k: int = K, d: int = D, d_ff: int = D_FF) -> Built:
    module = ctx.instantiate((d, d_ff, n_exp, k), dtype)
    return Built(module, find_router(module, d, n_exp), n_exp, k)


def make_tokens(ctx: Context, built: Built, n: int, offset: int, scale: float = 1.0):
    """``n`` float64 tokens whose top-k set and top-1 expert win by at least MARGIN (relative)."""
    gen = ctx.generator(offset)
    router = built.router_weight()
    pool = scale * ctx.randn(40 * n, router.shape[1], gen=gen, dtype=torch.float64)
    logits = pool @ router.T
    ranked = logits.sort(dim=-1, descending=True).values
    spread = ranked[:, 0] - ranked[:, -1]
    ok = (ranked[:, 0] - ranked[:, 1] > MARGIN * spread) & (
        (ranked[:, built.top_k - 1] - ranked[:, built.top_k] > MARGIN * spread) if built.top_k < built.n_experts else True)
    picked = pool[ok][:n]
    if len(picked) < n:  # a degenerate router (all-equal rows): take what there is, the checks will say so
        picked = pool[:n]
    return picked


def forward(ctx: Context, module, x):
    ret = ctx.call(module, x)
    if not (isinstance(ret, (tuple, list)) and len(ret) == 2 and all(isinstance(t, torch.Tensor) for t in ret)):
        raise WrongShape(Ev("forward returned {type}, not (y, aux_loss), two tensors", type=type(ret).__name__))
    y, aux = ret
    expect_shape(y, x.shape, "y")
    expect_shape(aux, (), "aux_loss")
    return y, aux


def layout_check(ctx: Context):
    built = build(ctx)
    if not built.ok:
        return outcome("fail", Ev("unrecognised layout: expected router (or gate) = nn.Linear({d}, {e}, bias=False) and "
                                  "experts = nn.ModuleList of {e} modules", d=D, e=E))  # fmt: skip
    return outcome("pass", Ev("router {router} [{e}, {d}], {e} experts", router=built.router, e=E, d=D))


def shape_check(ctx: Context, shape, k: int = K):
    built = build(ctx, k=k)
    x = ctx.randn(*shape, gen=ctx.generator(1))
    y, aux = forward(ctx, built.module, x)
    if y.dtype != x.dtype:
        return outcome("fail", Ev("y dtype is {dtype}, the input's is {expected}", dtype=str(y.dtype), expected=str(x.dtype)))
    return outcome("pass", Ev("top_k {k}: y {shape}, a 0-dim aux_loss", k=k, shape=list(y.shape)))


def truth_pair(ctx: Context, k: int, n_exp: int, shape, offset: int, dtype=torch.float32, d_ff: int = D_FF):
    """(module in dtype, x in dtype, truth (y, aux), same-precision (y, aux), float32 (y, aux) or None) for tokens
    shaped ``shape``; the float32 reference (same ops) only for a float64 check, where the code may route in float32."""
    built = build(ctx, dtype, n_exp, k, shape[-1], d_ff)
    wide = build(ctx, torch.float64, n_exp, k, shape[-1], d_ff)
    if not built.ok or not wide.ok:
        return None
    n = 1
    for s in shape[:-1]:
        n *= s
    x = make_tokens(ctx, wide, n, offset).to(dtype)
    x2d = x.reshape(-1, shape[-1])
    truth = reference(x2d.double(), wide.router_weight(), wide.expert_outputs(ctx, x2d.double()), k)
    outs = built.expert_outputs(ctx, x2d)
    same = reference(x2d, built.router_weight(dtype), outs, k)
    narrow = None
    if dtype == torch.float64:
        narrow = reference(x2d.float(), built.router_weight(torch.float32), outs.float(), k)
    return built, x.reshape(shape), truth, same, narrow


def numerical_check(ctx: Context, offset: int, k: int = K, n_exp: int = E, shape=X, dtype=torch.float32, d_ff: int = D_FF):
    found = truth_pair(ctx, k, n_exp, shape, 100 + offset, dtype, d_ff)
    if found is None:
        return outcome("skip", NO_LAYOUT)
    built, x, (ty, ta), (sy, sa), narrow = found
    y, aux = forward(ctx, built.module, x)
    what = Ev("{n} experts, top_k {k}, {dtype}", n=n_exp, k=k, dtype=str(dtype)[6:])
    ny, na = narrow or (None, None)
    result = against_truth([(Ev("{name} ({what})", name="y", what=what), y.reshape(-1, shape[-1]), ty, sy, ny),
                            (Ev("{name} ({what})", name="aux_loss", what=what), aux, ta, sa, na)])  # fmt: skip
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def drawn_check(ctx: Context):
    """d_model, d_ff, the number of experts, top_k and the token grid drawn from the seed."""
    d, d_ff, n_exp, b, t = ctx.sizes(300, (3, 10), (4, 16), (3, 6), (1, 3), (2, 9), avoid=(D,))
    (k,) = ctx.sizes(301, (1, n_exp - 1))
    result = numerical_check(ctx, 6, k, n_exp, (b, t, d), d_ff=d_ff)
    where = Ev("B={b}, T={t}, d_model={d}, d_ff={d_ff} (drawn from the seed)", b=b, t=t, d=d, d_ff=d_ff)
    result.message = Ev("{label}: {what}", label=where, what=result.message)
    return result


def expert_params(built: Built, i: int) -> dict[str, torch.Tensor]:
    prefix = f"experts.{i}."
    return {n[len(prefix):]: p for n, p in built.module.named_parameters() if n.startswith(prefix)}


def weights_sum_check(ctx: Context):
    """Every expert made identical (the judge copies expert 0's parameters into the others): then y must be
    expert(x) itself, whatever the routing, since each token's weights sum to 1."""
    built = build(ctx, torch.float64)
    if not built.ok:
        return outcome("skip", NO_LAYOUT)
    first = expert_params(built, 0)
    for i in range(1, built.n_experts):
        if set(expert_params(built, i)) != set(first):
            return outcome("skip", Ev("skipped: the experts do not share one parameter layout"))
        ctx.user.assign(built.module, {f"experts.{i}.{n}": p.detach().clone() for n, p in first.items()})
    x = make_tokens(ctx, built, 8, 150)
    y, _ = forward(ctx, built.module, x)
    expert0 = built.expert_outputs(ctx, x)[0]
    ratio = (y.detach() * expert0).sum(dim=-1) / (expert0 * expert0).sum(dim=-1)
    worst = int((ratio - 1).abs().argmax())
    off = (ratio - 1).abs()[worst].item()
    if off <= 1e-9:
        return outcome("pass", Ev("with every expert identical, y = expert(x) for every token: the weights sum to 1 (float64)"))
    # The same ops in float32 (a router softmax upcast to float32, as Hugging Face writes it) drift this far.
    ref = reference(x.float(), built.router_weight(torch.float32), expert0.float().expand(built.n_experts, -1, -1),
                    built.top_k)[0].double()  # fmt: skip
    drift = ((ref * expert0).sum(dim=-1) / (expert0 * expert0).sum(dim=-1) - 1).abs().max().item()
    if off <= property_allowed(drift, torch.float32):
        return outcome("pass", Ev("with every expert identical, y = expert(x) for every token to {off:.2g}: the weights sum to 1; {note}",
                                  off=off, note=FLOAT32_NOTE))  # fmt: skip
    return outcome("fail", Ev("with every expert identical, token {t}'s y is {ratio} times expert(x), not 1: each token's routing "
                              "weights must sum to 1 (softmax over its top-k logits)", t=worst,
                              ratio=shown(ratio[worst].item(), 1.0)))  # fmt: skip


def unselected_check(ctx: Context):
    """float64: changing an expert's parameters moves exactly the tokens routed to it."""
    built = build(ctx, torch.float64)
    if not built.ok:
        return outcome("skip", NO_LAYOUT)
    x = make_tokens(ctx, built, 10, 250)
    chosen = (x @ built.router_weight().T).topk(built.top_k, dim=-1).indices
    base, _ = forward(ctx, built.module, x)
    gen = ctx.generator(251)
    for j in range(built.n_experts):
        params = expert_params(built, j)
        ctx.user.assign(built.module, {f"experts.{j}.{n}": p.detach() + ctx.randn(*p.shape, gen=gen, dtype=torch.float64)
                                       for n, p in params.items()})  # fmt: skip
        y, _ = forward(ctx, built.module, x)
        change = (y.detach() - base.detach()).abs().amax(dim=-1).nan_to_num(nan=float("inf"))
        routed = (chosen == j).any(dim=-1)
        leaked = ~routed & (change > LEAK_THRESHOLD)
        if leaked.any():
            t = int(leaked.nonzero()[0])
            return outcome("fail", Ev("changing expert {j} moved token {t}'s y by {change:.3g}, though token {t} is routed to experts "
                                      "{experts}: a token's output may only come from its top-{k} experts", j=j, t=t,
                                      change=change[t].item(), experts=chosen[t].tolist(), k=built.top_k),
                           "moe-dense-ignores-routing")  # fmt: skip
        if params and (routed & (change == 0)).any():
            t = int((routed & (change == 0)).nonzero()[0])
            return outcome("fail", Ev("changing expert {j} did not move token {t}, which is routed to it", j=j, t=t))
        base = y
    return outcome("pass", Ev("each of the {n} experts moves exactly the tokens routed to it (float64)", n=built.n_experts))


def gradient_check(ctx: Context):
    """d (y·g + 3·aux) / d x and / d the router weight, against the reference built on the user's experts."""
    found = truth_pair(ctx, K, E, X, 200)
    if found is None:
        return outcome("skip", NO_LAYOUT)
    built, x = found[:2]
    gen = ctx.generator(201)
    seed_grad = ctx.randn(*X, gen=gen, dtype=torch.float64)
    leaf = x.clone().requires_grad_()
    y, aux = forward(ctx, built.module, leaf)
    ctx.call(lambda: ((y * seed_grad.float()).sum() + 3 * aux).backward(), watch=False)
    router = getattr(built.module, built.router).weight
    if leaf.grad is None or router.grad is None:
        missing = "x" if leaf.grad is None else f"{built.router}.weight"
        return outcome("fail", Ev("no gradient reaches {name} (detached?)", name=missing))
    grads = []
    for precision in (torch.float64, torch.float32):
        ref_x = x.detach().clone().to(precision).requires_grad_()
        ref_w = built.router_weight(precision).clone().requires_grad_()
        x2d = ref_x.reshape(-1, D)
        outs = built.expert_outputs(ctx, x2d.float()).to(precision)  # attached to ref_x through the user side
        ry, raux = reference(x2d, ref_w, outs, K)
        ((ry.reshape(X) * seed_grad.to(precision)).sum() + 3 * raux).backward()
        grads.append((ref_x.grad, ref_w.grad))
    return against_truth([("dx", leaf.grad, grads[0][0], grads[1][0]),
                          (f"d{built.router}.weight", router.grad, grads[0][1], grads[1][1])])  # fmt: skip


def aux_gradient_check(ctx: Context):
    """The aux loss alone must reach the router through P_i (f_i, a count, carries no gradient)."""
    built = build(ctx, torch.float64)
    if not built.ok:
        return outcome("skip", NO_LAYOUT)
    x = make_tokens(ctx, built, 12, 300)
    _, aux = forward(ctx, built.module, x)
    if aux.requires_grad:  # an aux loss with no graph at all (P_i detached too) cannot even be backpropagated
        ctx.call(lambda: aux.backward(), watch=False)
    router = getattr(built.module, built.router).weight
    grads = []
    for precision in (torch.float64, torch.float32):  # float32: the same ops, for code that routes in float32
        w = built.router_weight(precision).clone().requires_grad_()
        zeros = torch.zeros(built.n_experts, *x.shape, dtype=precision)
        reference(x.to(precision), w, zeros, built.top_k)[1].backward()
        grads.append(w.grad)
    if router.grad is None or router.grad.abs().max().item() == 0:
        return outcome("fail", Ev("the aux loss gives the router no gradient: it is built from counts only (f_i, an argmax count, has "
                                  "none), so it cannot balance anything; multiply f_i by P_i, the mean router probability"),
                       "moe-aux-counts-only")  # fmt: skip
    wrt = f"d aux_loss / d {built.router}.weight"
    label = Ev("{name} ({what})", name=wrt, what="float64")
    return against_truth([(label, router.grad, grads[0], grads[0], grads[1])])


def rows_check(ctx: Context):
    built = build(ctx, torch.float64)
    x = ctx.randn(*X, gen=ctx.generator(350), dtype=torch.float64)
    return row_independence_check(ctx, lambda z: forward(ctx, built.module, z)[0], x)


def large_logits_check(ctx: Context):
    """float32 tokens scaled so that router logits reach ~1e3: an exp without the max subtracted overflows."""
    built = build(ctx)
    wide = build(ctx, torch.float64)
    if not built.ok:
        return outcome("skip", NO_LAYOUT)
    x = make_tokens(ctx, wide, 10, 400)
    scale = 1000.0 / (x @ wide.router_weight().T).abs().max().item()
    x = (x * scale).float()
    truth = reference(x.double(), wide.router_weight(), wide.expert_outputs(ctx, x.double()), K)
    same = reference(x, built.router_weight(torch.float32), built.expert_outputs(ctx, x), K)
    y, aux = forward(ctx, built.module, x)
    for name, got, want in (("y", y, truth[0]), ("aux_loss", aux, truth[1])):
        if first_nonfinite(got, want) is not None:
            return outcome("fail", Ev("router logits ~1e3 (float32) give a non-finite {name}: exp overflows without the max subtracted "
                                      "(torch.softmax does it)", name=name), "unstable-softmax")  # fmt: skip
    return against_truth([(Ev("{name} at router logits ~1e3 (float32)", name="y"), y, *[t[0] for t in (truth, same)]),
                          (Ev("{name} at router logits ~1e3 (float32)", name="aux_loss"), aux, truth[1], same[1])])  # fmt: skip


@dataclass(frozen=True)
class Probe:
    built: Built
    x: torch.Tensor
    outs: torch.Tensor

    def user(self, ctx: Context):
        y, aux = forward(ctx, self.built.module, self.x.clone())
        return torch.cat([y.detach().reshape(-1), aux.detach().reshape(1)])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct MoE" here.
        variant = variant if isinstance(variant, MoEVariant) else CORRECT_MOE
        y, aux = reference(self.x, self.built.router_weight(), self.outs, self.built.top_k, variant)
        return torch.cat([y.reshape(-1), aux.reshape(1)])


HYPOTHESES = (
    ("moe-softmax-not-renormalised", MoEVariant(weights="full")),
    ("moe-weights-not-normalised", MoEVariant(weights="raw")),
    ("moe-weights-not-normalised", MoEVariant(weights="tokens")),
    ("moe-dense-ignores-routing", MoEVariant(dense="softmax")),
    ("moe-dense-ignores-routing", MoEVariant(dense="sum")),
    ("moe-aux-counts-only", MoEVariant(aux="counts")),
    ("moe-aux-topk-fractions", MoEVariant(aux="topk")),
)


class MoETask:
    name = "moe"

    def checks(self, ctx: Context) -> list[CheckDef]:
        x = ctx.randn(*X, gen=ctx.generator(600))

        def no_mutation():
            module = build(ctx).module
            return no_mutation_check(ctx, lambda: forward(ctx, module, x), {"x": x})

        def deterministic():
            module = build(ctx).module
            return deterministic_check(lambda: torch.cat([t.reshape(-1) for t in forward(ctx, module, x.clone())]))

        half = [CheckDef(f"numerical.{str(dt)[6:]}", "numerical", partial(numerical_check, ctx, 5, dtype=dt))
                for dt in (torch.float16, torch.bfloat16) if ctx.device.type == "cuda"]  # fmt: skip
        return [
            CheckDef("load.layout", "rules", partial(layout_check, ctx)),
            CheckDef("shape.3d", "shape", partial(shape_check, ctx, X)),
            CheckDef("shape.2d", "shape", partial(shape_check, ctx, (7, D))),
            CheckDef("shape.top-1", "shape", partial(shape_check, ctx, X, 1)),
            CheckDef("numerical.seed0", "numerical", partial(numerical_check, ctx, 0)),
            CheckDef("numerical.seed1", "numerical", partial(numerical_check, ctx, 1, shape=(9, D))),
            CheckDef("numerical.top-1", "numerical", partial(numerical_check, ctx, 2, 1)),
            CheckDef("numerical.top-3-of-5", "numerical", partial(numerical_check, ctx, 3, 3, 5)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 4, dtype=torch.float64)),
            CheckDef("numerical.drawn", "numerical", partial(drawn_check, ctx)),
            *half,
            CheckDef("numerical.weights-sum-to-one", "numerical", partial(weights_sum_check, ctx)),
            CheckDef("gradient.x-and-router", "gradient", partial(gradient_check, ctx)),
            CheckDef("gradient.aux-loss", "gradient", partial(aux_gradient_check, ctx)),
            CheckDef("mask-leak.unselected-experts", "mask-leak", partial(unselected_check, ctx)),
            CheckDef("mask-leak.tokens", "mask-leak", partial(rows_check, ctx)),
            CheckDef("stability.large-router-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = build(ctx, torch.float64)
            if not built.ok:
                return []
            x = make_tokens(ctx, built, 9, 1100, 1.5)
            return [Probe(built, x, built.expert_outputs(ctx, x))]
        except Exception:  # noqa: BLE001 - a module that cannot be built or run gives no evidence
            return []

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = MoETask()
