"""An exception raised on every call is evidence (issue 26): its type, message and line, confirmed against the
user's source on the judge side, name the cause; a message alone, or another line, names nothing."""

from __future__ import annotations

import pytest

from drill.grade.battery import run_battery
from drill.grade.checks.raised import raised_codes

from whiteboard_impls import IMPLS

VIEW_ERROR = ("raised RuntimeError: view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")  # fmt: skip
BROADCAST_ERROR = "raised RuntimeError: The size of tensor a (6) must match the size of tensor b (5) at non-singleton dimension 2"

SOURCE = '''import torch


def f(x, w):
    y = x.transpose(1, 2)
    z = y.view(-1)
    mu = x.mean(-1)
    m, _ = x.max(dim=-1)
    s = x.sum(-1, keepdim=True)
    a = x - mu
    b = x - m
    c = x - s
    d = x - torch.logsumexp(x, dim=-1)
    e = x - x.sum()
    raise RuntimeError("view size is not compatible with input tensor's size and stride")
'''


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "user.py"
    path.write_text(SOURCE)
    return path


def at(path, line: int, source: str = "...") -> str:
    return f" (at {path.name}:{line} in f: {source})"


@pytest.mark.parametrize(("message", "line", "codes"), [
    (VIEW_ERROR, 6, ["view-non-contiguous"]),
    (VIEW_ERROR, 15, []),  # the same text raised by the user's own line, which calls no .view: forged, named nothing
    (BROADCAST_ERROR, 10, ["reduction-without-keepdim"]),  # mu = x.mean(-1) the line before
    (BROADCAST_ERROR, 11, ["reduction-without-keepdim"]),  # m, _ = x.max(dim=-1)
    (BROADCAST_ERROR, 12, []),  # keepdim=True: the broadcast failed for another reason
    (BROADCAST_ERROR, 13, ["reduction-without-keepdim"]),  # the reduction inline, torch.logsumexp(x, dim=-1)
    (BROADCAST_ERROR, 14, []),  # a full reduction to a scalar broadcasts anywhere
    ("raised ValueError: bad shape", 6, []),
])  # fmt: skip
def test_the_cause_is_read_from_the_line_that_raised(user_file, message, line, codes):
    assert raised_codes(message + at(user_file, line), user_file) == codes


def test_a_frame_in_another_file_names_nothing(user_file):
    assert raised_codes(VIEW_ERROR + " (at other.py:6 in f: z = y.view(-1))", user_file) == []
    assert raised_codes(VIEW_ERROR, user_file) == []  # no frame of the user's at all


def test_the_innermost_frame_is_the_one_read(user_file):
    two = f" (at {user_file.name}:15 in g: f(x, w); {user_file.name}:6 in f: z = y.view(-1))"
    assert raised_codes(VIEW_ERROR + two, user_file) == ["view-non-contiguous"]


@pytest.mark.parametrize(("name", "code"), [
    ("view-non-contiguous__fused_qkv_permute.py", "view-non-contiguous"),
    ("reduction-without-keepdim__layernorm_mean.py", "reduction-without-keepdim"),
])  # fmt: skip
def test_a_file_that_raises_on_every_call_is_named(name, code):
    report = run_battery(IMPLS / "broken" / name)
    errors = [c for c in report.checks if c.status == "error"]
    assert errors and all(c.codes == [code] for c in errors)
    assert [d.code for d in report.diagnosis] == [code]


def test_a_list_where_the_contract_wants_a_tensor_is_a_shape_failure_not_drills(tmp_path):
    """dequantize returning ``.tolist()``: every check that reads its output says so, the gradient check included,
    which used to meet the list as an AttributeError of its own ("could not check the result")."""
    path = tmp_path / "deq_list.py"
    path.write_text("import torch\n\n\ndef quantize_int8(w):\n    scale = w.abs().amax(dim=1, keepdim=True) / 127\n"
                    "    return torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8), scale\n\n\n"
                    "def dequantize(q, scale):\n    return (q.float() * scale).tolist()\n")  # fmt: skip
    report = run_battery(path, task="quantize")
    gradient = next(c for c in report.checks if c.id == "gradient.dequantize-scale")
    assert gradient.status == "fail" and gradient.message == "returned list, not a tensor" and gradient.codes == ["wrong-output-shape"]
    assert not any("could not check" in c.message for c in report.checks)
