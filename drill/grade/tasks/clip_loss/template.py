import torch
import torch.nn.functional as F


def clip_loss(image_features, text_features, logit_scale):
    """CLIP's contrastive loss (InfoNCE with in-batch negatives) for N matching image-text pairs.

    image_features: [N, D], row i is the embedding of image i (not normalised)
    text_features:  [N, D], row i is the embedding of the caption of image i (not normalised)
    logit_scale: the multiplier itself, already exponentiated (1 / temperature, e.g. 1 / 0.07);
                 a Python float or a 0-d tensor (then the loss must carry its gradient)
    returns: a 0-d tensor in the features' dtype: L2-normalise both sets of features, take
             logits = logit_scale * image @ text.T ([N, N]), and average the cross-entropy of each
             image over the texts and of each text over the images, pair i being the positive of row i.
    Stable for logit_scale up to 100. Rules: do not modify the inputs.
    """
    raise NotImplementedError
