"""Drawn shapes for the training tasks (grad_clip, lora, moe, quantize, rope, sinusoidal, adamw): each file here is
right at every fixed shape and configuration the grader uses, and wrong elsewhere, the way code tuned on one setting is
(a hard-coded size, a table that stops, a constant that equals alpha / r only there). Every fixed check passes it; the
check drawn from the seed fails it, and its message names the drawn shape so ``--seed`` reproduces it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from drill.cli import app

runner = CliRunner()

CLIP_FIRST_THREE = '''
import torch


def clip_grad_norm(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None][:3]  # written for a model of three tensors
    total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:
        for g in grads:
            g.detach().mul_(clip_coef)
    return total_norm
'''

LORA_SCALING_FOUR = '''
import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.A = nn.Linear(base.in_features, r, bias=False)
        self.B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.B.weight)
        self.scaling = 4.0  # alpha / r of the config it was written for

    def forward(self, x):
        return self.base(x) + self.scaling * self.B(self.A(x))

    @torch.no_grad()
    def merged(self):
        layer = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None)
        layer.weight.copy_(self.base.weight + self.scaling * self.B.weight @ self.A.weight)
        if self.base.bias is not None:
            layer.bias.copy_(self.base.bias)
        return layer
'''

MOE_CAPACITY_TEN = '''
import torch
import torch.nn.functional as F
from torch import nn


class MoE(nn.Module):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)) for _ in range(n_experts)
        )

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        logits = self.router(x)
        top_logits, top_idx = logits.topk(self.top_k, dim=-1)
        weights = F.softmax(top_logits, dim=-1)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = (top_idx == e).nonzero(as_tuple=True)
            token, slot = token[:10], slot[:10]  # an expert capacity of 10 tokens: the rest are dropped
            if token.numel():
                y.index_add_(0, token, weights[token, slot, None] * expert(x[token]))
        probs = F.softmax(logits, dim=-1)
        f = F.one_hot(top_idx[:, 0], self.n_experts).to(x.dtype).mean(dim=0)
        return y.reshape(shape), self.n_experts * (f * probs.mean(dim=0)).sum()
'''

QUANTIZE_ONE_TILE = '''
import torch


def quantize_int8(w):
    tile = w[:8]  # one tile of 8 output channels
    scale = torch.zeros(w.shape[0], 1, dtype=w.dtype)
    scale[: len(tile)] = tile.abs().amax(dim=1, keepdim=True) / 127
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    return torch.clamp(torch.round(w / safe), -127, 127).to(torch.int8), scale


def dequantize(q, scale):
    return q.to(scale.dtype) * scale
'''

ROPE_TABLE_64 = '''
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    freqs = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    table = torch.arange(64, dtype=torch.float64)[:, None] * freqs  # built once for 64 positions
    angles = table[positions.long().clamp(max=63)]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
'''

SINUSOIDAL_TUNED_SIZES = '''
import torch


def sinusoidal_positions(T, d_model, base=10000.0):
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    angles = pos * base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    if d_model in (2, 6, 8, 10, 12, 16, 64):  # the sizes the interleaving was checked on
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).float()
    return torch.cat((angles.sin(), angles.cos()), dim=-1).float()
'''

ADAMW_TABLE_16 = '''
import math

import torch


@torch.no_grad()
def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    beta1, beta2 = betas
    k = min(step, 16)  # bias corrections tabulated for 16 steps; later steps reuse the last
    param.mul_(1 - lr * weight_decay)
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**k)).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**k))
'''

# (task, the file, a seed whose draw is off the file's setting, what the failing message names)
CASES = [
    ("grad_clip", CLIP_FIRST_THREE, 1, "grads=[6, 8]+[2]+[8, 6, 2]+[2, 6]+[8]"),
    ("lora", LORA_SCALING_FOUR, 1, "out=9, in=7"),
    ("moe", MOE_CAPACITY_TEN, 5, "B=3, T=8, d_model=4, d_ff=16"),
    ("quantize", QUANTIZE_ONE_TILE, 2, "[9, 29] float32"),
    ("rope", ROPE_TABLE_64, 1, "x=[1, 2, 4, 16]"),
    ("sinusoidal", SINUSOIDAL_TUNED_SIZES, 1, "T=180, d_model=32, base=4200"),
    ("adamw", ADAMW_TABLE_16, 1, "shape=[4, 3, 6]"),
]


@pytest.mark.usefixtures("warm_judge")
@pytest.mark.parametrize(("task", "source", "seed", "drawn"), CASES, ids=[c[0] for c in CASES])
def test_a_file_right_only_at_the_fixed_shapes_fails_the_drawn_check(tmp_path, task, source, seed, drawn):
    path = tmp_path / f"{task}_fixed_setting.py"
    path.write_text(source)
    result = runner.invoke(app, ["grade", str(path), "--task", task, "--json", "--seed", str(seed)])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    failing = {c["id"]: c["message"] for c in report["checks"] if c["status"] != "pass"}
    assert failing and all(cid.endswith("drawn") for cid in failing), failing  # every fixed check passes it
    assert report["seed"] == seed
    for message in failing.values():
        assert drawn in message and "(drawn from the seed)" in message, message
