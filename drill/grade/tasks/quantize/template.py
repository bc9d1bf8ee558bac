import torch


def quantize_int8(w):
    """Symmetric int8 quantization of a weight matrix, one scale per output channel (row).

    w: [out, in], float32 or bfloat16
    returns (q, scale):
        q: int8 [out, in], round(w / scale) clamped to [-127, 127]
        scale: [out, 1] or [out], floating, absmax of the row / 127; an all-zero row gives q = 0
    Rules: no torch.quantize_per_channel / torch.ao.quantization; do not modify w.
    """
    raise NotImplementedError


def dequantize(q, scale):
    """q: int8 [out, in]; scale: as quantize_int8 returns it. returns q * scale, [out, in], in scale's dtype."""
    raise NotImplementedError
