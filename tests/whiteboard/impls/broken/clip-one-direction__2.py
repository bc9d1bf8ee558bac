"""Text-to-image only, with a hand-written log-softmax over the images."""

import torch


def clip_loss(image_features, text_features, logit_scale):
    img = image_features / image_features.norm(dim=-1, keepdim=True)
    txt = text_features / text_features.norm(dim=-1, keepdim=True)
    logits_per_text = logit_scale * txt @ img.T
    logp = logits_per_text - torch.logsumexp(logits_per_text, dim=-1, keepdim=True)
    return -logp.diagonal().mean()
