import torch
import torch.nn.functional as F


def clip_loss(image_features, text_features, logit_scale):
    image = image_features / image_features.norm(dim=0, keepdim=True)  # the batch axis, not the features
    text = text_features / text_features.norm(dim=0, keepdim=True)
    logits = logit_scale * image @ text.T
    labels = torch.arange(logits.shape[0], device=logits.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
