"""Labels built backwards (arange flipped): image i is paired with text N-1-i."""

import torch
import torch.nn.functional as F


def clip_loss(image_features, text_features, logit_scale):
    img, txt = F.normalize(image_features, dim=1), F.normalize(text_features, dim=1)
    logits = logit_scale * img @ txt.t()
    labels = torch.arange(logits.size(0), device=logits.device).flip(0)
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))
