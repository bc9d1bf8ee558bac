"""The ``sft_loss`` task: ``sft_loss(logits, labels, num_items_in_batch=None)`` and ``build_labels(input_ids, prompt_lens, pad_id)``.

The loss of Hugging Face's ``ForCausalLMLoss`` (transformers/loss/loss_utils.py): labels come unshifted, the logits
at position t are scored against the token at t + 1, -100 is ignored, and the token losses are summed over the
whole batch and divided by the counted tokens, or by ``num_items_in_batch`` when the caller accumulates gradients
(the fix of the 2024 gradient-accumulation bug: a mean per micro-batch weighs a micro-batch of few tokens as much
as one of many). The reference is that formula in float64 (and in the user's dtype for the tolerance rule).
Sequences have different prompt and response lengths, so a per-sequence mean, a missing shift and a per-micro-batch
mean each move the loss. ``build_labels`` is exact: the prompt and the right padding become -100.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.checks.common import dtype_id, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.text.messages import Ev

IGNORE = -100
ENTRY_LABELS = "build_labels"
LOSS = Ev("loss")
LABEL_CHECKS = frozenset({"labels.prompt-and-padding", "labels.pad-id", "labels.list-lengths", "labels.no-prompt"})


@dataclass(frozen=True)
class SFTVariant:
    shift: str = "next"  # next (correct): logits[t] vs labels[t + 1] | none: logits[t] vs labels[t] | back: logits[t + 1] vs labels[t]
    mean: str = "tokens"  # tokens (correct) | sequence: a mean per sequence, then over sequences | positions: ignored ones counted
    #                       | sequence-local: a mean per sequence only where num_items_in_batch is not given
    items: str = "divide"  # divide (correct): sum / num_items_in_batch when given | local: num_items_in_batch ignored


CORRECT_SFT = SFTVariant()


def reference(logits, labels, num_items_in_batch=None, variant: SFTVariant = CORRECT_SFT):
    if variant.shift == "next":
        logits, labels = logits[:, :-1], labels[:, 1:]
    elif variant.shift == "back":
        logits, labels = logits[:, 1:], labels[:, :-1]
    valid = labels != IGNORE
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, torch.where(valid, labels, 0)[..., None]).squeeze(-1) * valid
    if variant.mean == "sequence" or (variant.mean == "sequence-local" and num_items_in_batch is None):
        return (nll.sum(1) / valid.sum(1)).mean()
    if num_items_in_batch is not None and variant.items == "divide":
        return nll.sum() / float(num_items_in_batch)
    return nll.sum() / (valid.numel() if variant.mean == "positions" else valid.sum())


def make_inputs(ctx: Context, offset: int, b: int, t: int, v: int, scale: float = 2.0):
    """float64 logits [B, T, V] and labels [B, T]: per row a prompt of 1..T-3 tokens and right padding, both -100,
    and at least two response tokens, so every row has a counted shifted label."""
    gen = ctx.generator(offset)
    logits = scale * ctx.randn(b, t, v, gen=gen, dtype=torch.float64)
    labels = torch.randint(0, v, (b, t), generator=gen)
    prompt = torch.randint(1, max(2, t - 2), (b,), generator=gen)
    end = torch.minimum(prompt + 2 + torch.randint(0, t, (b,), generator=gen), torch.tensor(t))
    end[0] = t
    pos = torch.arange(t)[None, :]
    labels = labels.masked_fill((pos < prompt[:, None]) | (pos >= end[:, None]), IGNORE)
    return logits, labels.to(ctx.device)


def run(ctx: Context, logits, labels, **kwargs):
    out = tensor_result(ctx.call(ctx.entry, logits, labels, **kwargs), LOSS)
    expect_shape(out, (), LOSS)
    return out


def shape_check(ctx: Context, dims):
    logits, labels = make_inputs(ctx, 1, *dims)
    out = run(ctx, logits.float(), labels)
    if out.dtype != torch.float32:
        return outcome("fail", Ev("loss dtype is {dtype}, the logits' is torch.float32", dtype=str(out.dtype)))
    return outcome("pass", Ev("a 0-dim float32 loss from logits {dims}", dims=list(dims)))


def numerical_check(ctx: Context, offset: int, dims, dtype=torch.float32, items=None, scale: float = 2.0):
    logits, labels = make_inputs(ctx, 100 + offset, *dims, scale=scale)
    kwargs = {} if items is None else {"num_items_in_batch": items(labels)}
    truth = reference(logits, labels, **kwargs)
    same = reference(logits.to(dtype), labels, **kwargs)
    out = run(ctx, logits.to(dtype), labels.clone(), **kwargs)
    shown = kwargs.get("num_items_in_batch")
    if shown is None:
        what = Ev("logits {shape}, {dtype}", shape=list(dims), dtype=str(dtype)[6:])
    else:
        what = Ev("logits {shape}, {dtype}, num_items_in_batch={items}", shape=list(dims), dtype=str(dtype)[6:], items=repr(shown))
    result = against_truth([(Ev("loss ({what})", what=what), out, truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def accumulation_check(ctx: Context):
    """Two micro-batches of very different token counts, each divided by the step's total: they add up to the full batch."""
    logits, labels = make_inputs(ctx, 150, 5, 11, 7)
    labels[:2, 9:] = IGNORE  # the first micro-batch has fewer counted tokens
    total = int((labels[:, 1:] != IGNORE).sum())
    parts = [run(ctx, logits[s].float(), labels[s].clone(), num_items_in_batch=total) for s in (slice(0, 2), slice(2, 5))]
    summed = parts[0] + parts[1]
    truth, same = reference(logits, labels), reference(logits.float(), labels)
    result = against_truth([(Ev("sum of the 2 micro-batch losses (num_items_in_batch={total})", total=total), summed, truth, same)])
    if result.status == "pass":
        result.message = Ev("micro-batches of 2 and 3 rows add up to the full batch's loss: {what}", what=result.message)
    return result


def gradient_check(ctx: Context):
    logits64, labels = make_inputs(ctx, 200, 3, 9, 6)
    leaf = logits64.float().requires_grad_()
    out = run(ctx, leaf, labels)
    ctx.call(lambda: (out * 1.7).backward(), watch=False)
    if leaf.grad is None:
        return outcome("fail", Ev("no gradient reaches the logits (is the loss detached?)"))
    grads = []
    for precision in (torch.float64, torch.float32):
        ref = logits64.detach().clone().to(precision).requires_grad_()
        (reference(ref, labels) * 1.7).backward()
        grads.append(ref.grad)
    return against_truth([(Ev("dlogits"), leaf.grad, *grads)])


def ignored_leak_check(ctx: Context):
    """float64: the logits that predict an ignored label, and those of the last position, never reach the loss."""
    logits, labels = make_inputs(ctx, 300, 3, 8, 5)
    leaf = logits.clone().requires_grad_()
    base = run(ctx, leaf, labels)
    ctx.call(lambda: base.backward(), watch=False)
    unused = torch.ones(labels.shape, dtype=torch.bool)
    unused[:, :-1] = labels[:, 1:].cpu() == IGNORE
    moved = logits.clone()
    moved[unused] += 5 * ctx.randn(int(unused.sum()), logits.shape[-1], gen=ctx.generator(301), dtype=torch.float64)
    change = (run(ctx, moved, labels) - base).abs().item()
    if change > 1e-12 * max(1.0, abs(base.item())):
        return outcome("fail", Ev("changing the logits at the {n} positions whose next label is -100 (or that are last) "
                                  "moved the loss by {change:.3g}: they predict nothing that counts", n=int(unused.sum()), change=change))  # fmt: skip
    if leaf.grad is not None and leaf.grad[unused].abs().max().item() != 0:
        b, t = (int(i) for i in (unused & (leaf.grad.abs().amax(-1) != 0)).nonzero()[0])
        return outcome("fail", Ev("the logits at [{b}, {t}] get a gradient, but the label they predict (position {p}) is -100 or past the end",
                                  b=b, t=t, p=t + 1))  # fmt: skip
    return outcome("pass", Ev("the {n} positions that predict nothing counted never reach the loss or its gradient (float64)", n=int(unused.sum())))


def large_logits_check(ctx: Context):
    """float32 logits around 1000, spread ~100, each counted label the least likely class: exp overflows, and softmax
    underflows to 0 before a log."""
    logits, labels = make_inputs(ctx, 400, 2, 6, 5)
    logits = 1000 + 50 * logits  # spread ~100: the least likely class sits far below exp's float32 range
    labels[:, 1:] = torch.where(labels[:, 1:] == IGNORE, IGNORE, logits[:, :-1].argmin(-1).to(labels.device))
    truth, same = reference(logits, labels), reference(logits.float(), labels)
    out = run(ctx, logits.float(), labels.clone())
    if first_nonfinite(out, truth) is not None:
        return outcome("fail", Ev("logits ~1000 (spread ~100, float32) give a loss of {got}, expected {want:.6g}", got=out.item(), want=truth.item()),
                       "ce-unstable-logsumexp")  # fmt: skip
    return against_truth([(Ev("loss at logits ~1000, spread ~100 (float32)"), out, truth, same)])


def labeller(ctx: Context):
    handle = ctx.user.entry(ENTRY_LABELS)
    if handle is None:
        raise UserCodeError(Ev("the file does not define build_labels(input_ids, prompt_lens, pad_id)"), "not-implemented")
    return handle


def labels_inputs(ctx: Context, offset: int, b: int, t: int, pad_id: int, no_prompt: bool = False):
    gen = ctx.generator(offset)
    ids = torch.randint(0, 50, (b, t), generator=gen)
    ids = torch.where(ids >= pad_id, ids + 1, ids)  # pad_id appears nowhere else
    prompt = torch.zeros(b, dtype=torch.int64) if no_prompt else torch.randint(1, t - 1, (b,), generator=gen)
    end = torch.minimum(prompt + 1 + torch.randint(0, t, (b,), generator=gen), torch.tensor(t))
    end[0] = t
    ids = ids.masked_fill(torch.arange(t)[None, :] >= end[:, None], pad_id)
    return ids, prompt


def labels_reference(ids, prompt, pad_id, variant: str = "correct"):
    pos = torch.arange(ids.shape[1])[None, :]
    cut = {"correct": prompt, "prompt-kept": torch.zeros_like(prompt), "off-by-one+": prompt + 1, "off-by-one-": prompt - 1}
    masked = pos < cut.get(variant, prompt)[:, None]
    if variant != "padding-kept":
        masked |= ids == pad_id
    return ids.masked_fill(masked, IGNORE)


LABEL_BUGS = (("prompt-kept", "sft-prompt-in-loss"), ("padding-kept", "sft-padding-in-loss"),
              ("off-by-one+", "sft-prompt-off-by-one"), ("off-by-one-", "sft-prompt-off-by-one"))  # fmt: skip


def labels_check(ctx: Context, offset: int, dims, pad_id: int, as_list: bool = False, no_prompt: bool = False):
    ids, prompt = labels_inputs(ctx, 600 + offset, *dims, pad_id, no_prompt)
    sent_prompt = prompt.tolist() if as_list else prompt.clone()
    before = ids.clone()
    got = ctx.call(labeller(ctx), ids, sent_prompt, pad_id)
    if not isinstance(got, torch.Tensor):
        raise WrongShape(Ev("build_labels returned {type}, not a tensor", type=type(got).__name__))
    expect_shape(got, ids.shape, Ev("build_labels' output"))
    parts = (Ev("input_ids {dims}, pad_id={pad}", dims=list(dims), pad=pad_id), as_list and Ev("prompt_lens a list"), no_prompt and Ev("no prompts"))
    what = Ev.seq(filter(None, parts), ", ")
    if not torch.equal(ids, before):
        return outcome("fail", Ev("{label}: {what}", label=what, what=Ev("build_labels modified input_ids in place")), "mutates-input")
    if got.dtype != torch.int64:
        return outcome("fail", Ev("{label}: {what}", label=what, what=Ev("labels dtype is {dtype}, expected torch.int64", dtype=str(got.dtype))))
    want = labels_reference(ids, prompt, pad_id)
    if torch.equal(got, want):
        return outcome("pass", Ev("{label}: {what}", label=what, what=Ev("exact")))
    codes = [code for variant, code in LABEL_BUGS if not torch.equal(want, v := labels_reference(ids, prompt, pad_id, variant)) and torch.equal(got, v)]
    r, c = (int(i) for i in (got != want).nonzero()[0])
    wrong = Ev("labels[{r}, {c}] is {got}, expected {want} (prompt length {prompt}, token {token})",
               r=r, c=c, got=int(got[r, c]), want=int(want[r, c]), prompt=int(prompt[r]), token=int(ids[r, c]))
    return outcome("fail", Ev("{label}: {what}", label=what, what=wrong), *codes[:1])


@dataclass(frozen=True)
class Probe:
    """float64: the loss, with and without num_items_in_batch."""

    logits: torch.Tensor
    labels: torch.Tensor
    kwargs: tuple

    def user(self, ctx: Context):
        out = ctx.call(ctx.entry, self.logits.clone(), self.labels.clone(), **dict(self.kwargs))
        return out if isinstance(out, torch.Tensor) and out.shape == () else None

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct SFT loss" here.
        variant = variant if isinstance(variant, SFTVariant) else CORRECT_SFT
        return reference(self.logits, self.labels, **dict(self.kwargs), variant=variant)


HYPOTHESES = (
    ("sft-no-shift", SFTVariant(shift="none")),
    ("sft-no-shift", SFTVariant(shift="back")),
    ("sft-per-sequence-mean", SFTVariant(mean="sequence")),
    ("sft-per-sequence-mean", SFTVariant(mean="sequence-local")),
    ("sft-ignored-in-mean", SFTVariant(mean="positions")),
    ("sft-micro-batch-mean", SFTVariant(items="local")),
)


class SFTLossTask:
    name = "sft_loss"

    def checks(self, ctx: Context) -> list[CheckDef]:
        drawn = ctx.sizes(300, (2, 5), (6, 13), (3, 11))
        total = lambda labels: int((labels[:, 1:] != IGNORE).sum())  # noqa: E731
        logits, labels = make_inputs(ctx, 700, 2, 6, 5)
        logits = logits.float()
        defs = [
            CheckDef("shape.base", "shape", partial(shape_check, ctx, (3, 7, 5))),
            CheckDef("shape.one-row", "shape", partial(shape_check, ctx, (1, 4, 3))),
            CheckDef("numerical.base", "numerical", partial(numerical_check, ctx, 0, (3, 7, 5))),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, 1, drawn)),
            CheckDef("numerical.num-items-int", "numerical", partial(numerical_check, ctx, 2, (4, 9, 6), items=lambda lb: total(lb) + 13)),
            CheckDef("numerical.num-items-tensor", "numerical",
                     partial(numerical_check, ctx, 3, (3, 10, 7), items=lambda lb: torch.tensor(total(lb) * 3))),  # fmt: skip
            CheckDef("numerical.accumulation", "numerical", partial(accumulation_check, ctx)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 4, (3, 11, 9), torch.float64)),
        ]
        if ctx.device.type == "cuda":
            defs += [CheckDef(dtype_id("numerical", dt), "numerical", partial(numerical_check, ctx, 5, (3, 7, 5), dt, scale=1.0))
                     for dt in (torch.float16, torch.bfloat16)]  # fmt: skip
        return defs + [
            CheckDef("gradient.logits", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.ignored", "mask-leak", partial(ignored_leak_check, ctx)),
            CheckDef("stability.large-logits", "stability", partial(large_logits_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, logits, labels), {"logits": logits, "labels": labels})),  # fmt: skip
            CheckDef("labels.prompt-and-padding", "numerical", partial(labels_check, ctx, 0, (4, 9), 0)),
            CheckDef("labels.pad-id", "numerical", partial(labels_check, ctx, 1, (3, 13), 7)),
            CheckDef("labels.list-lengths", "numerical", partial(labels_check, ctx, 2, (5, 6), 3, as_list=True)),
            CheckDef("labels.no-prompt", "numerical", partial(labels_check, ctx, 3, (2, 7), 1, no_prompt=True)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        a = make_inputs(ctx, 1100, 4, 9, 6)
        b = make_inputs(ctx, 1101, 3, 12, 5)
        items = int((b[1][:, 1:] != IGNORE).sum()) * 2 + 5
        return [Probe(*a, ()), Probe(*b, ()), Probe(*b, (("num_items_in_batch", items),))]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = SFTLossTask()
