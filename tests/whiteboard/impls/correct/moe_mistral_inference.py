"""mistral-inference's MoeLayer with its FeedForward experts (Mixtral), as written.

Source: https://github.com/mistralai/mistral-inference/blob/2557e12d0e1878a1562ece30434820f80aa3e12a/src/mistral_inference/moe.py
and src/mistral_inference/transformer_layers.py (FeedForward; its gate is nn.Linear(dim, num_experts, bias=False)
as TransformerBlock builds it).
Adapted: MoeArgs is a plain dataclass (no simple_parsing); maybe_lora(None) is nn.Linear; the contract's
MoE(d_model, d_ff, n_experts, top_k) builds the layer as TransformerBlock does; forward flattens x to
[N, d_model] (the layer's softmax runs over dim=1, so it expects tokens flattened, as the model passes them)
and, as an inference library has no training loss, adds the contract's Switch load-balancing loss.
"""
import dataclasses
from typing import List

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass
class MoeArgs:
    num_experts: int
    num_experts_per_tok: int


class MoeLayer(nn.Module):
    def __init__(self, experts: List[nn.Module], gate: nn.Module, moe_args: MoeArgs):
        super().__init__()
        assert len(experts) > 0
        self.experts = nn.ModuleList(experts)
        self.gate = gate
        self.args = moe_args

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        gate_logits = self.gate(inputs)
        weights, selected_experts = torch.topk(gate_logits, self.args.num_experts_per_tok)
        weights = F.softmax(weights, dim=1, dtype=torch.float).to(inputs.dtype)
        results = torch.zeros_like(inputs)
        for i, expert in enumerate(self.experts):
            batch_idx, nth_expert = torch.where(selected_experts == i)
            results[batch_idx] += weights[batch_idx, nth_expert, None] * expert(inputs[batch_idx])
        return results


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()

        MaybeLora = nn.Linear
        self.w1 = MaybeLora(dim, hidden_dim, bias=False)
        self.w2 = MaybeLora(hidden_dim, dim, bias=False)
        self.w3 = MaybeLora(dim, hidden_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))  # type: ignore


class MoE(MoeLayer):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__(
            experts=[FeedForward(dim=d_model, hidden_dim=d_ff) for _ in range(n_experts)],
            gate=nn.Linear(d_model, n_experts, bias=False),
            moe_args=MoeArgs(num_experts=n_experts, num_experts_per_tok=top_k),
        )

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        y = super().forward(tokens).view(x.shape)
        logits = self.gate(tokens)  # the Switch loss (added): n_experts * sum_i f_i * P_i
        f = F.one_hot(logits.argmax(-1), self.args.num_experts).to(logits.dtype).mean(0)
        p = logits.softmax(-1).mean(0)
        return y, self.args.num_experts * (f * p).sum()
