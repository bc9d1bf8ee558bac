import torch
import torch.nn.functional as F


def clip_loss(image_features, text_features, logit_scale):
    image = F.normalize(image_features, dim=-1)
    text = F.normalize(text_features, dim=-1)
    logits = logit_scale * image @ text.T
    labels = torch.arange(logits.shape[0], device=logits.device)
    return F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)
