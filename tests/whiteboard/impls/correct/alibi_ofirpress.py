"""ALiBi as the paper's code builds it (ofirpress/attention_with_linear_biases, fairseq TransformerDecoder).

Source: https://github.com/ofirpress/attention_with_linear_biases/blob/4b92f28a005ead2567abe2359f633e73e08f3833/fairseq/models/transformer.py
(get_slopes and the alibi bias, verbatim; the decoder adds it to the future mask that fairseq's attention adds
to q k^T * scaling).
Adapted: the bias is built for the call's T and H instead of tokens_per_sample and the decoder's heads, in the
inputs' dtype; fairseq's MultiheadAttention is reduced to the matmuls and softmax it runs. The paper's bias is
slope * j (the key's index), equal to -slope * (i - j) up to a per-row constant, which softmax ignores under a
causal mask only: for causal=False the contract's -slope * |i - j| is used (the paper trains causal models only).
"""
import math

import torch


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = (2**(-2**-(math.log2(n)-3)))
        ratio = start
        return [start*ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)                   #In the paper, we only train models that have 2^a heads for some a. This function has
    else:                                                 #some good properties that only occur when the input is a power of 2. To maintain that even
        closest_power_of_2 = 2**math.floor(math.log2(n))  #when the number of heads is not a power of 2, we use this workaround.
        return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2*closest_power_of_2)[0::2][:n-closest_power_of_2]


def alibi_attention(q, k, v, causal=True):
    attn_heads, maxpos = q.shape[1], q.shape[2]
    slopes = torch.tensor(get_slopes(attn_heads), dtype=q.dtype, device=q.device)
    if causal:
        #In the next line, the part after the * is what constructs the diagonal matrix (right matrix in Figure 3 in the paper).
        alibi = slopes.unsqueeze(1).unsqueeze(1) * torch.arange(maxpos, device=q.device).unsqueeze(0).unsqueeze(0).expand(attn_heads, -1, -1)
        alibi = alibi.view(attn_heads, 1, maxpos)
        future_mask = torch.triu(torch.full((maxpos, maxpos), float("-inf"), dtype=q.dtype, device=q.device), 1)
        bias = alibi + future_mask
    else:
        pos = torch.arange(maxpos, device=q.device)
        bias = -slopes[:, None, None] * (pos[:, None] - pos[None, :]).abs()
    scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5 + bias
    return torch.softmax(scores, dim=-1) @ v
