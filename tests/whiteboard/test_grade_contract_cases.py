"""Every input form a contract allows is exercised, and a NaN is reported as a NaN with its index."""

from __future__ import annotations

import torch

from drill.grade.battery import run_battery
from drill.grade.tolerance import judge
from whiteboard_impls import IMPLS

ONE_MASK_FOR_ALL_HEADS = '''
import math
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        B, T, d = x.shape
        hd = d // self.n_heads
        q, k, v = (w(x).view(B, T, self.n_heads, hd).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        if mask is not None:
            scores = scores.masked_fill(~mask.reshape(B, -1, T, T)[:, :1], float("-inf"))  # head 0's mask for all
        return self.W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, d))
'''


def test_a_module_that_ignores_per_head_masks_fails(tmp_path):
    path = tmp_path / "one_mask.py"
    path.write_text(ONE_MASK_FOR_ALL_HEADS)
    report = run_battery(path)
    forms = next(c for c in report.checks if c.id == "numerical.mask-forms")
    assert forms.status in ("fail", "error") and not report.passed


def test_mask_forms_are_listed_when_they_pass():
    report = run_battery(IMPLS / "correct" / "mha_separate_wq.py")
    assert next(c for c in report.checks if c.id == "numerical.mask-forms").message.startswith("5 mask forms")
    report = run_battery(IMPLS / "correct" / "sdpa_matmul.py")
    assert next(c for c in report.checks if c.id == "numerical.mask-forms").message.startswith("5 mask forms")


def test_nan_is_reported_as_nan_at_its_index():
    truth = torch.ones(2, 3, dtype=torch.float64)
    user = torch.ones(2, 3)
    user[1, 2] = float("nan")
    verdict = judge(user, truth, truth.float())
    assert not verdict.ok and verdict.describe() == "output: NaN at [1, 2] where the reference is finite"
    user[0, 1] = float("-inf")
    assert judge(user, truth, truth.float()).describe() == (
        "output: -inf at [0, 1] where the reference is finite (2 values non-finite where the reference is finite)")


def test_infinite_truth_is_matched_exactly_and_never_widens_the_allowance():
    truth = torch.tensor([1.0, float("inf")], dtype=torch.float64)
    assert judge(torch.tensor([1.0, float("inf")]), truth, truth.float()).ok
    verdict = judge(torch.tensor([1.0, 5.0]), truth, truth.float())
    assert not verdict.ok and verdict.allowed < 1e-3
