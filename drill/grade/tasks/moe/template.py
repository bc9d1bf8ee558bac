import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    """A sparse mixture-of-experts layer with top-k routing (Mixtral) and the Switch load-balancing loss.

    __init__(d_model, d_ff, n_experts, top_k):
        router = nn.Linear(d_model, n_experts, bias=False)   (or named gate)
        experts = nn.ModuleList of n_experts FFNs, each d_model -> d_model (hidden size d_ff, any activation)
    forward(x): x [B, T, d_model] or [N, d_model] -> (y, aux_loss)
        per token: logits = router(x); pick the top_k experts by logit;
        weights = softmax over those top_k logits only; y = sum over the chosen experts of weight * expert(x)
        y has x's shape; aux_loss (0-dim) = n_experts * sum_i f_i * P_i, where
        f_i = fraction of tokens whose top-1 expert is i, P_i = mean over tokens of softmax(logits over all experts)[i]
    """

    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        raise NotImplementedError
