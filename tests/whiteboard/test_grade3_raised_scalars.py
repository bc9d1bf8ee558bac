"""An exception's cause is named only where the line could have raised it (issue 26, wave 2): a reduction without
keepdim scaled by a number (``momentum * mean``) broadcasts anywhere, so a broadcast error on that line is another
operand's (BatchNorm's [C, L] statistics added into a [C] buffer), and the task names it instead."""

from __future__ import annotations

import pytest

from drill.grade.battery import run_battery
from drill.grade.checks.raised import raised_codes, raising_source

from whiteboard_impls import IMPLS

BROADCAST_ERROR = "raised RuntimeError: The size of tensor a (3) must match the size of tensor b (7) at non-singleton dimension 1"

SOURCE = '''import torch


class Norm(torch.nn.Module):
    def __init__(self, c, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.scale = torch.nn.Parameter(torch.ones(c))
        self.register_buffer("running_mean", torch.zeros(c))

    def forward(self, x, decay=0.9):
        mean = x.mean(-1)
        first = x.mean(0)
        self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
        self.running_mean = decay * self.running_mean + 0.1 * first
        a = x - mean
        b = self.scale * mean
        c = (1 - self.momentum) * mean + x
        raise RuntimeError("unreachable")
'''


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "user.py"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize(("line", "codes"), [
    (14, []),  # self.momentum * mean: momentum is set from a number default, so the in-place add_ raised
    (15, []),  # first drops dim 0 only, which keepdim would not change: the buffer is what failed
    (16, ["reduction-without-keepdim"]),  # x - mean: the classic missing keepdim
    (17, ["reduction-without-keepdim"]),  # self.scale is a Parameter, not a number
    (18, ["reduction-without-keepdim"]),  # (1 - momentum) * mean + x: a scaled reduction beside a tensor
])  # fmt: skip
def test_a_reduction_scaled_by_a_number_is_not_the_cause(user_file, line, codes):
    assert raised_codes(f"{BROADCAST_ERROR} (at {user_file.name}:{line} in forward: ...)", user_file) == codes


def test_the_raising_statement_is_read_from_the_file_not_the_message(user_file):
    message = f"{BROADCAST_ERROR} (at {user_file.name}:14 in forward: forged text)"
    assert raising_source(message, user_file) == "self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)"
    assert raising_source(f"{BROADCAST_ERROR} (at other.py:14 in forward: x)", user_file) == ""


def test_batch_only_statistics_that_break_the_buffer_update_are_bn_wrong_dims():
    report = run_battery(IMPLS / "broken" / "bn-wrong-dims__reassign_buffers.py")
    assert [d.code for d in report.diagnosis] == ["bn-wrong-dims"]
    assert next(c for c in report.checks if c.id == "shape.3d-running-stats").codes == ["bn-wrong-dims"]
    assert all(c.codes == [] for c in report.checks if c.status == "error")
