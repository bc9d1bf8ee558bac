import torch


def rms_norm(x, weight, eps=1e-6):
    """RMSNorm over the last dim (LLaMA), written by hand.

    x: [..., D]   weight: [D]
    returns: [..., D], same dtype and device as x:
        weight * x / sqrt(mean(x ** 2) + eps)      (mean over the last dim; no mean subtracted)
    float16 / bfloat16 inputs: normalise in float32, cast back to x's dtype, then multiply by weight.
    Rules: no F.rms_norm / nn.RMSNorm, do not modify the inputs.
    """
    raise NotImplementedError
