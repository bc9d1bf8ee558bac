"""The ``clip_loss`` task: ``clip_loss(image_features, text_features, logit_scale) -> loss``.

CLIP's symmetric InfoNCE with in-batch negatives (Radford et al. 2021; open_clip's ``ClipLoss``): both feature
sets L2-normalised inside, ``logits = logit_scale · img @ txtᵀ`` (``logit_scale`` is the multiplier itself,
already exponentiated, as open_clip passes ``logit_scale.exp()``), cross-entropy against the diagonal in both
directions, averaged. The reference is that formula in float64 (and in the user's dtype for the tolerance
rule); ``F.cross_entropy`` and ``F.normalize`` are allowed, the point being what they are applied to. Features
come with row norms between 0.3 and 4, so a missing normalisation shows; the probes compare the loss and its
gradient in both feature sets, which tells one direction from the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import dtype_id, loss_probe, no_mutation_check, user_loss_grads
from drill.grade.checks.compare import against_truth, expect_shape, first_nonfinite
from drill.grade.checks.rows import tensor_result
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev

N, D = 7, 12
SCALE = 1 / 0.07  # CLIP's initial temperature
LOSS = Ev("loss")


@dataclass(frozen=True)
class ClipVariant:
    norm: str = "both"  # both (correct) | none | batch: normalised over dim 0 (the batch) instead of the features
    direction: str = "both"  # both (correct) | image: image-to-text only | text: text-to-image only | sum: the two added
    scale: str = "mul"  # mul (correct) | div: logits / logit_scale | exp: logit_scale exponentiated once more
    labels: str = "diagonal"  # diagonal (correct) | zeros: every row's target is column 0 | reversed: N-1-i


CORRECT_CLIP = ClipVariant()


def reference(image, text, logit_scale, variant: ClipVariant = CORRECT_CLIP):
    scale = torch.as_tensor(logit_scale, dtype=image.dtype, device=image.device)
    if variant.norm == "both":
        image, text = F.normalize(image, dim=-1), F.normalize(text, dim=-1)
    elif variant.norm == "batch":
        image, text = F.normalize(image, dim=0), F.normalize(text, dim=0)
    scale = {"mul": scale, "div": 1 / scale, "exp": scale.exp()}[variant.scale]
    logits = scale * image @ text.T
    n = logits.shape[0]
    labels = {"diagonal": torch.arange(n), "zeros": torch.zeros(n, dtype=torch.long),
              "reversed": torch.arange(n - 1, -1, -1)}[variant.labels].to(logits.device)  # fmt: skip
    to_text, to_image = F.cross_entropy(logits, labels), F.cross_entropy(logits.T, labels)
    return {"both": (to_text + to_image) / 2, "image": to_text, "text": to_image, "sum": to_text + to_image}[variant.direction]


def make_inputs(ctx: Context, offset: int, n: int = N, d: int = D, dtype=torch.float64):
    """Paired features (text = image + noise, so the diagonal is likelier), row norms between 0.3 and 4."""
    gen = ctx.generator(offset)
    image = ctx.randn(n, d, gen=gen, dtype=torch.float64)
    text = image + 1.2 * ctx.randn(n, d, gen=gen, dtype=torch.float64)
    norms = 0.3 + 3.7 * torch.rand(2, n, 1, generator=gen, dtype=torch.float64).to(ctx.device)
    image, text = image / image.norm(dim=-1, keepdim=True) * norms[0], text / text.norm(dim=-1, keepdim=True) * norms[1]
    return image.to(dtype), text.to(dtype)


def run(ctx: Context, image, text, logit_scale):
    out = tensor_result(ctx.call(ctx.entry, image, text, logit_scale), LOSS)
    expect_shape(out, (), LOSS)
    return out


def shape_check(ctx: Context, n: int):
    image, text = make_inputs(ctx, 1, n, dtype=torch.float32)
    out = run(ctx, image, text, SCALE)
    if out.dtype != image.dtype:
        return outcome("fail", Ev("loss dtype is {dtype}, the features' is {expected}", dtype=str(out.dtype), expected=str(image.dtype)))
    return outcome("pass", Ev("a 0-dim loss from {n} pairs of {d}-dim features", n=n, d=D))


def numerical_check(ctx: Context, offset: int, n: int = N, d: int = D, dtype=torch.float32, scale=SCALE, tensor_scale=False):
    image, text = make_inputs(ctx, 100 + offset, n, d)
    sent_scale = torch.tensor(scale, dtype=dtype, device=ctx.device) if tensor_scale else scale
    truth = reference(image, text, scale)
    same = reference(image.to(dtype), text.to(dtype), torch.tensor(scale, dtype=dtype))
    if tensor_scale:
        what = Ev("N={n}, D={d}, logit_scale=a 0-d tensor {scale:.4g}, {dtype}", n=n, d=d, scale=scale, dtype=str(dtype)[6:])
    else:
        what = Ev("N={n}, D={d}, logit_scale={scale:.4g}, {dtype}", n=n, d=d, scale=scale, dtype=str(dtype)[6:])
    result = against_truth([(Ev("loss ({what})", what=what), run(ctx, image.to(dtype), text.to(dtype), sent_scale), truth, same)])
    if result.status == "pass":
        result.message = Ev("{label}: {what}", label=what, what=result.message)
    return result


def gradient_check(ctx: Context):
    """d loss / d image_features, d text_features and d logit_scale (CLIP learns its temperature)."""
    image, text = make_inputs(ctx, 200)
    base = (image, text, torch.tensor(SCALE, dtype=torch.float64))
    leaves = [t.float().requires_grad_() for t in base]
    loss = run(ctx, *leaves)
    ctx.call(lambda: (loss * 1.7).backward(), watch=False)
    grads = {}
    for precision in (torch.float64, torch.float32):
        refs = [t.float().to(precision).requires_grad_() for t in base]
        (reference(*refs) * 1.7).backward()
        grads[precision] = [r.grad for r in refs]
    pairs = []
    for i, name in enumerate(("image_features", "text_features", "logit_scale")):
        if leaves[i].grad is None:
            return outcome("fail", Ev("no gradient reaches {name} (is it detached, or read with .item()?)", name=name))
        pairs.append((Ev("d loss / d {name}", name=name), leaves[i].grad, grads[torch.float64][i], grads[torch.float32][i]))
    return against_truth(pairs)


def pairs_check(ctx: Context):
    """float64: shuffling the pairs (image i stays with text i) must not change the loss: the positives are the diagonal."""
    image, text = make_inputs(ctx, 300)
    base = run(ctx, image, text, SCALE).item()
    order = torch.randperm(N, generator=ctx.generator(301)).to(ctx.device)
    shuffled = run(ctx, image[order], text[order], SCALE).item()
    if abs(shuffled - base) > 1e-9 * max(1.0, abs(base)):
        return outcome("fail", Ev("the same {n} pairs in another order give {shuffled:.6g} instead of {base:.6g} (float64): "
                                  "the positive of row i must be column i, whatever the order", n=N, shuffled=shuffled, base=base),
                       "clip-labels-not-diagonal")  # fmt: skip
    return outcome("pass", Ev("the same {n} pairs in another order give the same loss (float64)", n=N))


def large_scale_check(ctx: Context):
    """float32, logit_scale = 100 (open_clip's cap): logits up to ±100, so exp overflows without the max subtracted."""
    image, text = make_inputs(ctx, 400)
    text = image + 0.05 * text
    truth, same = reference(image, text, 100.0), reference(image.float(), text.float(), torch.tensor(100.0))
    out = run(ctx, image.float(), text.float(), 100.0)
    if first_nonfinite(out, truth) is not None:
        return outcome("fail", Ev("logit_scale = 100 (float32, logits up to ±100) gives a loss of {got}, expected {expected:.6g}: "
                                  "exp(100) overflows float32", got=out.item(), expected=truth.item()), "clip-unstable-logsumexp")  # fmt: skip
    return against_truth([(Ev("loss at logit_scale = 100 (float32)"), out, truth, same)])


@dataclass(frozen=True)
class Probe:
    """float64; the loss followed by its gradient in both feature sets (times N, so each entry is O(1))."""

    image: torch.Tensor
    text: torch.Tensor
    scale: float

    def user(self, ctx: Context):
        leaves = [self.image.clone().requires_grad_(), self.text.clone().requires_grad_()]
        found = user_loss_grads(ctx, ctx.entry, leaves, self.scale)
        return None if found is None else loss_probe(*found, self.image.shape[0])

    def expected(self, variant):
        # The engine's baseline is reference.CORRECT, which means "the correct CLIP loss" here.
        variant = variant if isinstance(variant, ClipVariant) else CORRECT_CLIP
        leaves = [self.image.clone().requires_grad_(), self.text.clone().requires_grad_()]
        loss = reference(*leaves, self.scale, variant)
        return loss_probe(loss, torch.autograd.grad(loss, leaves), self.image.shape[0])


HYPOTHESES = (
    ("clip-no-normalisation", ClipVariant(norm="none")),
    ("clip-normalised-wrong-dim", ClipVariant(norm="batch")),
    ("clip-one-direction", ClipVariant(direction="image")),
    ("clip-one-direction", ClipVariant(direction="text")),
    ("clip-directions-summed", ClipVariant(direction="sum")),
    ("clip-temperature-inverted", ClipVariant(scale="div")),
    ("clip-scale-exponentiated", ClipVariant(scale="exp")),
    ("clip-labels-not-diagonal", ClipVariant(labels="zeros")),
    ("clip-labels-not-diagonal", ClipVariant(labels="reversed")),
)


class ClipLossTask:
    name = "clip_loss"
    implies = {"clip-scale-exponentiated": {"clip-unstable-logsumexp"}}  # exp(100) logits overflow whatever the softmax

    def checks(self, ctx: Context) -> list[CheckDef]:
        n, d = ctx.sizes(50, (3, 13), (5, 40), avoid=(4, 8, 16, 32))
        defs = [
            CheckDef("shape.batch", "shape", partial(shape_check, ctx, N)),
            CheckDef("shape.one-pair", "shape", partial(shape_check, ctx, 1)),
            CheckDef("numerical.float-scale", "numerical", partial(numerical_check, ctx, 0)),
            CheckDef("numerical.tensor-scale", "numerical", partial(numerical_check, ctx, 1, scale=30.0, tensor_scale=True)),
            CheckDef("numerical.scale-1", "numerical", partial(numerical_check, ctx, 2, 5, 9, scale=1.0)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, 3, n, d)),
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, 4, dtype=torch.float64, scale=50.0)),
        ]
        for dtype in ctx.dtypes[1:]:
            defs.append(CheckDef(dtype_id("numerical", dtype), "numerical", partial(numerical_check, ctx, 5, dtype=dtype)))
        image, text = make_inputs(ctx, 600, dtype=torch.float32)
        return defs + [
            CheckDef("gradient.features-and-scale", "gradient", partial(gradient_check, ctx)),
            CheckDef("mask-leak.pairs", "mask-leak", partial(pairs_check, ctx)),
            CheckDef("stability.large-scale", "stability", partial(large_scale_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness",
                     partial(no_mutation_check, ctx, lambda: run(ctx, image, text, SCALE),
                             {"image_features": image, "text_features": text})),  # fmt: skip
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe(*make_inputs(ctx, 1100, 6, 5), 3.0), Probe(*make_inputs(ctx, 1101, 5, 11), 0.7)]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = ClipLossTask()
