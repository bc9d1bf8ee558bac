import math

import torch
import torch.nn.functional as F
from torch import nn


class EncoderLayer(nn.Module):
    """A BERT-style Transformer encoder layer: post-LayerNorm, bidirectional attention with key padding.

    __init__(d_model, n_heads, ffn_dim, eps=1e-12): q_proj, k_proj, v_proj, o_proj (Linear d_model -> d_model,
    with bias), norm1, norm2 (nn.LayerNorm(d_model, eps=eps)), fc1 (d_model -> ffn_dim), fc2 (ffn_dim -> d_model).
    forward(x, key_padding_mask): x [B, T, d_model]; key_padding_mask bool [B, T], True = a real token that may
    be attended (False = padding: no query attends to it; padded positions still get an output).
      x = norm1(x + attn(x)); x = norm2(x + fc2(gelu(fc1(x)))), GELU in its exact (erf) form.
    returns [B, T, d_model]. No causal mask: an encoder sees both directions.
    """

    def __init__(self, d_model, n_heads, ffn_dim, eps=1e-12):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, key_padding_mask):
        raise NotImplementedError
