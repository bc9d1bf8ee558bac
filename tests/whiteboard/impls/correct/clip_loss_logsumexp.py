"""InfoNCE written out: log-sum-exp over each row and each column minus the positive logit on the diagonal."""

import torch


def clip_loss(image_features, text_features, logit_scale):
    img = image_features * torch.rsqrt((image_features * image_features).sum(-1, keepdim=True))
    txt = text_features * torch.rsqrt((text_features * text_features).sum(-1, keepdim=True))
    logits = torch.einsum("id,jd->ij", img, txt) * logit_scale
    positive = logits.diagonal()
    image_to_text = torch.logsumexp(logits, dim=1) - positive
    text_to_image = torch.logsumexp(logits, dim=0) - positive
    return 0.5 * (image_to_text.mean() + text_to_image.mean())
