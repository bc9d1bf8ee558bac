from torch.nn.utils import clip_grad_norm_


def clip_grad_norm(parameters, max_norm):
    return clip_grad_norm_(parameters, max_norm)
