"""llm.c's reference LayerNorm.forward (doc/layernorm), as written.

Source: https://github.com/karpathy/llm.c/blob/07bf4ce08b789effa05ffead233cc3a943701aed/doc/layernorm/layernorm.py
Adapted: the module-level eps = 1e-5 becomes the contract's eps argument (a default of the method); forward
unpacks B, T, C = x.size(), so layer_norm views any [..., D] input as [rows, 1, D] and back, and returns `out`
(the cache is for llm.c's manual backward).
"""
import torch


class LayerNorm:

    @staticmethod
    def forward(x, w, b, eps=1e-5):
        B, T, C = x.size()
        mean = x.sum(-1, keepdim=True) / C # B,T,1
        xshift = x - mean # B,T,C
        var = (xshift**2).sum(-1, keepdim=True) / C # B,T,1
        rstd = (var + eps) ** -0.5 # B,T,1
        norm = xshift * rstd # B,T,C
        out = norm * w + b # B,T,C

        cache = (x, w, mean, rstd)
        return out, cache


def layer_norm(x, weight, bias, eps=1e-5):
    out, _ = LayerNorm.forward(x.reshape(-1, 1, x.shape[-1]), weight, bias, eps)
    return out.view(x.shape)
