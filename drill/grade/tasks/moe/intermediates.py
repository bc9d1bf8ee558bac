"""What ``drill grade --trace`` compares the user's MoE against: the router logits, the top-k logits, their
softmax (the routing weights), every expert's output on every token (the user's own experts, called by the
judge), the weighted sum y; the full softmax, its mean P_i, f_i·P_i and the Switch aux loss."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.tasks.moe.task import build, make_tokens
from drill.grade.trace_match import Case
from drill.grade.tracing import NoTrace
from drill.text.messages import Ev

SHAPE = (3, 5, 6)  # 15 tokens of d_model 6; 4 experts, top 2, d_ff 8: no two sizes equal


LARGE = Ev("router logits around 1e3")
AUX = Ev("aux loss")  # a step the call returns, though no op reads it


def case(ctx, large: bool = False) -> Case:
    """``large``: the stress input, tokens scaled so that the router logits reach ±2e3 (the top-k sets unchanged)."""
    built = build(ctx, torch.float64)
    if not built.ok:
        raise NoTrace("no router (or gate) nn.Linear and experts ModuleList")
    x2d = make_tokens(ctx, built, SHAPE[0] * SHAPE[1], offset=7)  # top-k sets that win by a margin
    if large:
        x2d = x2d * 2e3 / (x2d @ built.router_weight().T).abs().max()
    outs = built.expert_outputs(ctx, x2d)  # [E, N, d]
    logits = x2d @ built.router_weight().T
    top, idx = logits.topk(built.top_k, dim=-1)
    weights = torch.softmax(top, dim=-1)
    chosen = outs.permute(1, 0, 2).gather(1, idx[..., None].expand(-1, -1, x2d.shape[-1]))  # [N, k, d]
    y = (weights[..., None] * chosen).sum(dim=1)
    probs = torch.softmax(logits, dim=-1)
    f = F.one_hot(idx[:, 0], built.n_experts).to(x2d.dtype).mean(dim=0)
    fp = f * probs.mean(dim=0)
    dense = torch.zeros_like(logits).scatter(-1, idx, weights)  # [N, E]: the weights at the chosen experts, 0 elsewhere
    steps = [(Ev("x (tokens)"), x2d), (Ev("router logits"), logits), (Ev("top-k logits"), top), (Ev("routing weights"), weights),
             (Ev("routing weights over all experts (0 where not chosen)"), dense)]  # fmt: skip
    steps += [(Ev("expert {e} on every token", e=e), outs[e]) for e in range(built.n_experts)]
    steps += [(Ev("every expert on every token"), outs), (Ev("chosen experts' outputs"), chosen),
              (Ev("weight · expert output"), weights[..., None] * chosen), ("output", y.reshape(SHAPE)),
              (Ev("softmax over all experts"), probs), (Ev("P_i (mean router probability)"), probs.mean(dim=0)),
              ("f_i·P_i", fp), ("Σ f_i·P_i", fp.sum()), (AUX, built.n_experts * fp.sum())]  # fmt: skip
    label = LARGE if large else None
    return Case(built.module, (x2d.reshape(SHAPE),), steps, returned=("output", AUX), label=label)


def stress(ctx, failed: set[str]) -> list[Case]:
    """Router logits around 1e3 when that check failed: a softmax without the max subtracted overflows there."""
    return [case(ctx, large=True)] if "stability.large-router-logits" in failed else []
