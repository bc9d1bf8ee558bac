"""What ``drill grade --trace`` compares the user's clip_loss against: N = 5 pairs of 7-dim features with row norms
between 0.5 and 3, logit_scale = 3.5 (not CLIP's 14.3, so a hard-coded one shows). The steps: each set's row norms,
the normalised features, the cosine similarities, the logits and their transpose, the log-softmax over texts and over
images, the diagonal of each, each direction's loss and their mean."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

N, D, SCALE = 5, 7, 3.5

LARGE = ("logit_scale = 1000 with near-identical pairs (logits up to ±1000)", "logit_scale = 1000、图文几乎相同（logits 可达 ±1000）")


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
    steps = [("image_features", image), ("text_features", text), ("image norms", n_img), ("text norms", n_txt),
             ("normalised image features", img), ("normalised text features", txt), ("cosine similarities", sim),
             ("logits", logits), ("logits.T", logits.T), ("labels", labels),
             ("row max", logits.amax(-1, keepdim=True)), ("column max", logits.amax(0, keepdim=True)),
             ("log-sum-exp over texts", logits.logsumexp(-1)), ("log-sum-exp over images", logits.logsumexp(0)),
             ("log-softmax over texts", lp_text), ("log-softmax over images", lp_image),
             ("positive logits (diagonal)", logits.diagonal()),
             ("image-to-text loss", loss_t), ("text-to-image loss", loss_i), ("sum of both directions", loss_t + loss_i),
             ("output", (loss_t + loss_i) / 2)]  # fmt: skip
    if large:
        steps = [(name, t) for name, t in steps if not t.is_floating_point() or torch.isfinite(t).all()]
    zh = {"image_features": "image_features（图像特征）", "text_features": "text_features（文本特征）", "image norms": "图像特征的模长",
          "text norms": "文本特征的模长", "normalised image features": "归一化后的图像特征", "normalised text features": "归一化后的文本特征",
          "cosine similarities": "余弦相似度", "labels": "labels（对角线标签）", "row max": "行最大值", "column max": "列最大值",
          "log-sum-exp over texts": "在文本上的 log-sum-exp", "log-sum-exp over images": "在图像上的 log-sum-exp",
          "log-softmax over texts": "在文本上的 log-softmax", "log-softmax over images": "在图像上的 log-softmax",
          "positive logits (diagonal)": "正样本的 logits（对角线）", "image-to-text loss": "图到文方向的损失",
          "text-to-image loss": "文到图方向的损失", "sum of both directions": "两个方向的损失之和"}  # fmt: skip
    zh = {name: text for name, text in zh.items() if name in dict(steps)}
    return Case(ctx.entry, (image, text, scale), steps, zh=zh, label=LARGE if large else None,
                factors=[(1 / SCALE**2, "logits divided by logit_scale instead of multiplied", "logits 除以了 logit_scale，而不是乘以它"),
                         (2.0, "the two directions added, not averaged", "两个方向相加了，而不是取平均")])  # fmt: skip


def stress(ctx, failed: set[str]) -> list[Case]:
    """logit_scale = 1000 when the large-scale check failed: exp of the logits overflows float64 there without the max."""
    return [case(ctx, large=True)] if "stability.large-scale" in failed else []
