"""Checks every task shares: masks for the inputs, the float64 Jacobian leak check, the large-logits
verdict, in-place mutation, determinism and the fully-masked-row advisory. No task imports another:
what two tasks both need lives here (or in drill.grade.checks.compare, drill.grade.reference).
"""

from __future__ import annotations

import torch

from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.context import Context, outcome
from drill.text.messages import Ev


def dtype_id(family: str, dtype: torch.dtype, float32: str | None = None) -> str:
    """A check's id at one precision: ``float32`` (or the family alone) in float32, ``family.float16`` and
    ``family.bfloat16`` for the half-precision runs on CUDA."""
    return (float32 or family) if dtype == torch.float32 else f"{family}.{str(dtype).removeprefix('torch.')}"


def random_mask(shape, gen: torch.Generator, device) -> torch.Tensor:
    """Random bool mask with at least one allowed key per query row."""
    mask = torch.rand(shape, generator=gen) < 0.6
    pick = torch.randint(shape[-1], (*shape[:-1], 1), generator=gen)
    return mask.scatter(-1, pick, True).to(device)


def padding_mask(lengths, t: int, device) -> torch.Tensor:
    """[B, 1, 1, T]: key j of sample b is real iff j < lengths[b]."""
    return (torch.arange(t)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :].to(device)


def jacobian_check(ctx: Context, fn, x):
    """d out[t] / d x[t'] must be exactly 0 for t' > t (and across samples), non-zero for t' <= t.

    One float64 vector-Jacobian product per output row (a random cotangent cannot cancel).
    """
    out = ctx.call(fn, x)
    expect_shape(out[..., 0], x.shape[:2], Ev("output (leading dims)"))
    b, t = x.shape[:2]
    gen = ctx.generator(501)
    for s in range(b):
        for i in range(t):
            cotangent = torch.zeros_like(out)
            cotangent[s, i] = ctx.randn(out.shape[-1], gen=gen, dtype=out.dtype)
            scalar = (out * cotangent).sum()  # no grad_outputs: passing one makes autograd import sympy
            (grad,) = ctx.call(torch.autograd.grad, scalar, x, retain_graph=True, allow_unused=True, watch=False)
            block = torch.zeros(b, t) if grad is None else grad.abs().sum(dim=-1)  # [B, T]
            for j in range(t):
                if j > i and block[s, j] != 0:
                    return outcome("fail", Ev("d out[{i}] / d x[{j}] is {d:.3g}, not 0: position {i} sees {j}", i=i, j=j, d=block[s, j].item()))
                if j <= i and block[s, j] == 0:
                    return outcome("fail", Ev("d out[{i}] / d x[{j}] is 0: position {i} cannot see position {j}", i=i, j=j))
            other = [s2 for s2 in range(b) if s2 != s and (block[s2] != 0).any()]
            if other:
                return outcome("fail", Ev("sample {s} position {i} depends on sample {other}", s=s, i=i, other=other[0]))
    return outcome("pass", Ev("float64 Jacobian: exactly 0 above the diagonal, non-zero on and below it"))


def large_logits_verdict(out, truth, ordinary=None):
    """``ordinary()``: the user's output for the same call at ordinary logits. A NaN it has too comes from the code
    (a query left with no allowed key), not from exp overflowing: a failure, but not ``unstable-softmax``."""
    expect_shape(out, truth.shape)
    bad = first_nonfinite(out, truth)
    if bad is not None and ordinary is not None:
        usual = torch.isfinite(ordinary().detach())
        overflow = first_nonfinite(out, truth.masked_fill(~usual, float("nan")))  # non-finite only at large logits
        if overflow is None:
            return outcome("fail", Ev("logits ~1e3 give a non-finite output at {at}, as ordinary logits do: "
                                      "not an overflow (a query with no allowed key gives NaN)", at=list(bad)))  # fmt: skip
        bad = overflow
    if bad is not None:
        return outcome("fail", Ev("logits ~1e3 give a non-finite output at {at}", at=list(bad)), "unstable-softmax")
    error = (out.double() - truth).abs().max().item()
    if error > 1e-6 * max(1.0, truth.abs().max().item()):
        return outcome("fail", Ev("logits ~1e3: max error {e:.3g} against the float64 reference", e=error))
    return outcome("pass", Ev("logits ~1e3 (float64): finite, max error {e:.2g}", e=error))


def no_mutation_check(ctx: Context, call, named_inputs):
    before = {name: t.clone() for name, t in named_inputs.items()}
    call()
    changed = [name for name, t in named_inputs.items() if not torch.equal(t, before[name])]
    if changed:
        return outcome("fail", Ev("modified in place: {names}", names=", ".join(changed)), "mutates-input")
    return outcome("pass", Ev("{names} unchanged", names=", ".join(named_inputs)))


def deterministic_check(call):
    first, second = call(), call()
    expect_shape(second, first.shape)
    if not torch.allclose(first, second, rtol=0, atol=0, equal_nan=True):
        diff = (first - second).abs().max().item()
        return outcome("fail", Ev("two identical calls differ by {d:.3g} (dropout left on?)", d=diff), "dropout-in-eval")
    return outcome("pass", Ev("two identical calls give identical outputs"))


def fully_masked_check(ctx: Context, call, row_index):
    """Advisory: what happens to a query that may attend to nothing."""
    out = call()
    row = out[row_index]
    if torch.isnan(row).all():
        return outcome(
            "warn",
            Ev("a fully masked row gives NaN; torch >= 2.5 returns 0 there. Either is defensible, "
               "but NaN spreads through the next layer: fill such rows with 0 if they can occur."),
        )
    if row.abs().max().item() == 0:
        return outcome("pass", Ev("a fully masked row gives 0, as torch >= 2.5 does"))
    return outcome(
        "warn",
        Ev("a fully masked row gives a finite non-zero output (a -1e9 fill averages all values uniformly); "
           "torch >= 2.5 returns 0 there."),
    )


def mask_forms(b: int, h: int, tq: int, tk: int, gen: torch.Generator, device) -> list[tuple[Ev, torch.Tensor | None]]:
    """Every mask form an attention contract 'broadcastable to [B, H, Tq, Tk]' allows, labelled:
    none, one [Tq, Tk] for all, key padding [B, 1, 1, Tk], per sample [B, 1, Tq, Tk], per head [B, H, Tq, Tk]."""
    lengths = [tk - (i % tk) for i in range(b)]
    return [
        (Ev("no mask"), None),
        (Ev("[Tq, Tk] mask"), random_mask((tq, tk), gen, device)),
        (Ev("[B, 1, 1, Tk] key-padding mask"), padding_mask(lengths, tk, device)),
        (Ev("[B, 1, Tq, Tk] mask"), random_mask((b, 1, tq, tk), gen, device)),
        (Ev("[B, H, Tq, Tk] per-head mask"), random_mask((b, h, tq, tk), gen, device)),
    ]


def gradient_verdict(ctx: Context, base, dtype, user_forward, reference_forward, names="qkv", label: str = ""):
    """The user's gradients of ``sum(out * seed)`` w.r.t. ``base`` against float64 and same-precision references.

    ``base`` are float64 inputs, cast to ``dtype`` for the user; ``user_forward(*leaves)`` calls the
    user's code, ``reference_forward(*tensors, precision)`` the reference. The seed is drawn here, in
    the output's shape, from generator 201, so every task's gradient check reads the same way.
    """
    leaves = [t.detach().to(dtype).requires_grad_() for t in base]
    out = user_forward(*leaves)
    seed = ctx.randn(*out.shape, gen=ctx.generator(201), dtype=torch.float64)
    ctx.call(lambda: (out * seed.to(out.dtype)).sum().backward(), watch=False)
    grads = {}
    for precision in (torch.float64, dtype):
        refs = [t.detach().clone().to(precision).requires_grad_() for t in base]
        (reference_forward(*refs, precision) * seed.to(precision)).sum().backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for name, leaf, exact, same in zip(names, leaves, grads[torch.float64], grads[dtype]):
        if leaf.grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached?)", name=name))
        pairs.append((Ev("d{name}{label}", name=name, label=label) if label else Ev("d{name}", name=name), leaf.grad, exact, same))
    return against_truth(pairs)


def user_loss_grads(ctx: Context, fn, leaves: list, *args, unpack: bool = False, **kwargs):
    """(loss, gradients in ``leaves``) of the user's ``fn(*leaves, *args, **kwargs)``; zeros for a leaf the loss does
    not use; None unless the loss is a 0-d tensor (``unpack``: or a tuple that starts with one)."""
    loss = ctx.call(fn, *leaves, *args, **kwargs)
    if unpack and isinstance(loss, (tuple, list)) and loss:
        loss = loss[0]
    if not isinstance(loss, torch.Tensor) or loss.shape != ():
        return None
    grads = ctx.call(torch.autograd.grad, loss, leaves, allow_unused=True, watch=False)
    return loss, [torch.zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves)]


def loss_probe(loss: torch.Tensor, grads, scale: int) -> torch.Tensor:
    """A loss probe's float64 output: the loss, then each gradient times ``scale`` (the token or sample count, so each
    entry is O(1) and the diagnosis compares them on one footing)."""
    return torch.cat([loss.detach().double().reshape(1), *(scale * g.detach().double().reshape(-1) for g in grads)])
