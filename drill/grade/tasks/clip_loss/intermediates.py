"""What ``drill grade --trace`` compares the user's clip_loss against: N = 5 pairs of 7-dim features with row norms
between 0.5 and 3, logit_scale = 3.5 (not CLIP's 14.3, so a hard-coded one shows). The steps: each set's row norms,
the normalised features, the cosine similarities, the logits and their transpose, the log-softmax over texts and over
images, the diagonal of each, each direction's loss and their mean."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case
from drill.text.messages import Ev

N, D, SCALE = 5, 7, 3.5

LARGE = Ev("logit_scale = 1000 with near-identical pairs (logits up to ±1000)")


def case(ctx, large: bool = False) -> Case:
    gen = torch.Generator().manual_seed(7)
    image = torch.randn(N, D, generator=gen, dtype=torch.float64)
    text = image + torch.randn(N, D, generator=gen, dtype=torch.float64)
    norms = torch.tensor([0.5, 1.7, 3.0, 0.8, 2.2], dtype=torch.float64)[:, None]
    image, text = image / image.norm(dim=-1, keepdim=True) * norms, text / text.norm(dim=-1, keepdim=True) * norms.flip(0)
    scale = 1000.0 if large else SCALE  # float64: exp overflows past 709
    if large:
        text = image + 0.01 * text
    n_img, n_txt = image.norm(dim=-1, keepdim=True), text.norm(dim=-1, keepdim=True)
    img, txt = image / n_img, text / n_txt
    sim = img @ txt.T
    logits = scale * sim
    labels = torch.arange(N)
    lp_text, lp_image = logits.log_softmax(-1), logits.T.log_softmax(-1)
    loss_t, loss_i = -lp_text.diagonal().mean(), -lp_image.diagonal().mean()
    steps = [(Ev("image_features"), image), (Ev("text_features"), text), (Ev("image norms"), n_img), (Ev("text norms"), n_txt),
             (Ev("normalised image features"), img), (Ev("normalised text features"), txt), (Ev("cosine similarities"), sim),
             ("logits", logits), ("logits.T", logits.T), (Ev("labels"), labels),
             (Ev("row max"), logits.amax(-1, keepdim=True)), (Ev("column max"), logits.amax(0, keepdim=True)),
             (Ev("log-sum-exp over texts"), logits.logsumexp(-1)), (Ev("log-sum-exp over images"), logits.logsumexp(0)),
             (Ev("log-softmax over texts"), lp_text), (Ev("log-softmax over images"), lp_image),
             (Ev("positive logits (diagonal)"), logits.diagonal()),
             (Ev("image-to-text loss"), loss_t), (Ev("text-to-image loss"), loss_i), (Ev("sum of both directions"), loss_t + loss_i),
             ("output", (loss_t + loss_i) / 2)]  # fmt: skip
    if large:
        steps = [(name, t) for name, t in steps if not t.is_floating_point() or torch.isfinite(t).all()]
    return Case(ctx.entry, (image, text, scale), steps, label=LARGE if large else None,
                factors=[(1 / SCALE**2, Ev("logits divided by logit_scale instead of multiplied")),
                         (2.0, Ev("the two directions added, not averaged"))])  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """logit_scale = 1000 when the large-scale check failed: exp of the logits overflows float64 there without the max."""
    return [case(ctx, large=True)] if "stability.large-scale" in failed else []
