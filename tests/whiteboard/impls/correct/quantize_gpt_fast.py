"""gpt-fast's dynamically_quantize_per_channel (int8 weight-only quantization), as written.

Source: https://github.com/pytorch-labs/gpt-fast/blob/0055c42dfeb98f5c3e1a1ab8c2e4b3025f7d3f3a/quantize.py
Adapted: gpt-fast's WeightOnlyInt8QuantHandler calls it with (-128, 127), so its scale is absmax / 127.5; the
contract's range is [-127, 127] (scale = absmax / 127), so quantize_int8 passes (-127, 127) and returns
(quant, scales); dequantize is WeightOnlyInt8Linear's `weight.to(dtype) * scales` without the matmul, in the
scale's dtype. The function's own epsilon guard (scales clamped to float32's eps) is kept.
"""
import torch


def dynamically_quantize_per_channel(x, quant_min, quant_max, target_dtype):
    # assumes symmetric quantization
    # assumes axis == 0
    # assumes dense memory format
    # TODO(future): relax ^ as needed

    # default setup for affine quantization of activations
    eps = torch.finfo(torch.float32).eps

    # get min and max
    min_val, max_val = torch.aminmax(x, dim=1)

    # calculate scales and zero_points based on min and max
    # reference: https://fburl.com/code/srbiybme
    min_val_neg = torch.min(min_val, torch.zeros_like(min_val))
    max_val_pos = torch.max(max_val, torch.zeros_like(max_val))
    device = min_val_neg.device

    # reference: https://fburl.com/code/4wll53rk
    max_val_pos = torch.max(-min_val_neg, max_val_pos)
    scales = max_val_pos / (float(quant_max - quant_min) / 2)
    # ensure scales is the same dtype as the original tensor
    scales = torch.clamp(scales, min=eps).to(x.dtype)
    zero_points = torch.zeros(min_val_neg.size(), dtype=torch.int64, device=device)

    # quantize based on qmin/qmax/scales/zp
    x_div = x / scales.unsqueeze(-1)
    x_round = torch.round(x_div)
    x_zp = x_round + zero_points.unsqueeze(-1)
    quant = torch.clamp(x_zp, quant_min, quant_max).to(target_dtype)

    return quant, scales, zero_points


def quantize_int8(w):
    quant, scales, _ = dynamically_quantize_per_channel(w, -127, 127, torch.int8)
    return quant, scales


def dequantize(q, scale):
    return q.to(dtype=scale.dtype) * scale.unsqueeze(-1)
