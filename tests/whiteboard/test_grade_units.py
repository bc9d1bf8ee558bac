"""The building blocks: tolerance rule, builtin spy, task detection, report JSON."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.reference import attention
from drill.grade.report import Check, Report
from drill.grade.user.spy import BuiltinSpy
from drill.grade.tasks import TASKS, detect
from drill.grade.tolerance import judge


def test_tolerance_accepts_float32_rounding_and_rejects_a_real_error():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    truth, _ = attention(q, k, v)
    same, _ = attention(q.float(), k.float(), v.float())
    einsum = torch.einsum("bhqk,bhkd->bhqd", torch.softmax(torch.einsum("bhqd,bhkd->bhqk", q.float(), k.float()) / 2, -1), v.float())
    assert judge(einsum, truth, same).ok
    wrong = einsum.clone()
    wrong[1, 2, 3, 0] += 1e-3
    verdict = judge(wrong, truth, same)
    assert not verdict.ok and verdict.where == (1, 2, 3, 0)


def test_tolerance_treats_nan_as_infinite_error():
    truth = torch.ones(3, dtype=torch.float64)
    user = torch.tensor([1.0, float("nan"), 1.0])
    assert not judge(user, truth, truth.float()).ok


def test_spy_sees_aliased_and_module_builtins():
    from torch.nn.functional import scaled_dot_product_attention as renamed

    x = torch.randn(1, 2, 3, 4)
    spy = BuiltinSpy()
    with spy:
        renamed(x, x, x)
        torch.nn.MultiheadAttention(4, 2, batch_first=True).eval()(x[0], x[0], x[0])
    assert spy.seen == {"F.scaled_dot_product_attention", "F.multi_head_attention_forward (nn.MultiheadAttention)"}


def test_spy_ignores_plain_torch():
    spy = BuiltinSpy()
    with spy:
        F.softmax(torch.randn(3, 3) @ torch.randn(3, 3), dim=-1)
    assert spy.seen == set()


def test_task_detection_from_defined_names():
    assert detect({"scaled_dot_product_attention": 1}).name == "sdpa"
    assert detect({"CausalSelfAttention": 1, "helper": 2}).name == "causal"
    assert detect({"attention": 1}) is None
    assert {"sdpa", "mha", "causal"} <= set(TASKS)


def test_detection_prefers_the_composite_task_over_its_helpers():
    assert detect({"CausalSelfAttention", "TransformerBlock"}).name == "block"
    assert detect({"scaled_dot_product_attention", "MultiHeadAttention"}).name == "mha"
    assert detect({"scaled_dot_product_attention", "flash_attention"}).name == "flash"


def test_grade_help_names_every_registered_task():
    from drill.cli import TASK_NAMES

    assert set(TASK_NAMES.replace(" or ", ", ").split(", ")) == set(TASKS)


def test_report_json_contract():
    report = Report("sdpa", "cpu", [Check("shape.4d", "shape", "pass", "ok"), Check("x", "rules", "fail", "no", ["uses-builtin"])])
    data = report.to_dict()
    assert list(data) == ["task", "device", "passed", "checks", "diagnosis", "duration_s"]
    assert data["passed"] is False
    assert data["checks"][1] == {"id": "x", "category": "rules", "status": "fail", "message": "no", "message_zh": "no"}
    assert Report.from_wire(report.to_wire()).checks[1].codes == ["uses-builtin"]
