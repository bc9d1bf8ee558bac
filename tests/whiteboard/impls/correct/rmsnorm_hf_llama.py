"""Hugging Face's LlamaRMSNorm, as written.

Source: https://github.com/huggingface/transformers/blob/002272831fba584eb30dca9729c1be456836960a/src/transformers/models/llama/modeling_llama.py
Adapted: the contract's function builds the module and sets its weight and epsilon.
"""
import torch
from torch import nn


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        """
        LlamaRMSNorm is equivalent to T5LayerNorm
        """
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rms_norm(x, weight, eps=1e-6):
    norm = LlamaRMSNorm(x.shape[-1], eps)
    del norm.weight
    norm.weight = weight  # a plain tensor attribute, so gradients reach the caller's weight
    return norm(x)
