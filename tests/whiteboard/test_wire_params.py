"""The $params recipe (clip_grad_norm's parameters) and the Python-level builtins the rule can watch."""

from __future__ import annotations

import pytest
import torch

from drill.grade.user import spy, wire
from drill.grade.user.params import GradParameter


def roundtrip(value, recipes=True):
    collected: list[torch.Tensor] = []
    header, _ = wire.encode(value, collect=collected)
    return wire.build(header["value"], collected, recipes=recipes), collected


def test_params_arrive_as_parameters_whose_grad_is_the_sent_tensor():
    value, grad = torch.randn(3), torch.ones(3)
    (params,), sent = roundtrip((wire.Params(((value, grad), (torch.zeros(2), None))),))
    assert [type(p) for p in params] == [GradParameter, GradParameter]
    assert params[0].grad is sent[1] and params[1].grad is None
    assert torch.equal(params[0].detach(), value) and params[0].requires_grad


def test_a_new_grad_assigned_is_copied_into_the_sent_tensor():
    (params,), sent = roundtrip((wire.Params(((torch.randn(4), torch.full((4,), 2.0)),)),))
    params[0].grad = params[0].grad * 0.25
    assert torch.equal(sent[1], torch.full((4,), 0.5)) and params[0].grad is sent[1]
    torch.nn.utils.clip_grad_norm_(params, 0.1)  # torch's in-place path lands in the same tensor
    assert abs(sent[1].norm().item() - 0.1) < 1e-5


def test_params_are_refused_in_a_reply_and_when_malformed():
    with pytest.raises(wire.WireError, match="outside a request"):
        roundtrip(wire.Params(((torch.randn(2), torch.randn(2)),)), recipes=False)
    with pytest.raises(wire.WireError, match="pairs"):
        roundtrip(wire.Params(((torch.randn(2), torch.randn(3)),)))
    with pytest.raises(wire.WireError, match="pairs"):
        wire.build({"$params": [[1, None]]}, [], recipes=True)


def test_watched_python_builtins_are_seen_by_name_and_behave_as_before(monkeypatch):
    import torch.nn.utils as utils
    import torch.optim.lr_scheduler as sched

    monkeypatch.setattr(utils, "clip_grad_norm_", utils.clip_grad_norm_)
    monkeypatch.setattr(utils.clip_grad, "clip_grad_norm_", utils.clip_grad.clip_grad_norm_)
    monkeypatch.setattr(sched.LRScheduler, "__init__", sched.LRScheduler.__init__)
    spy.watch_python_builtins()
    p = torch.nn.Parameter(torch.zeros(3))
    p.grad = torch.full((3,), 4.0)
    watcher = spy.BuiltinSpy()
    watcher.extra = {"clip_grad_norm_": "clip", "LRScheduler": "sched"}
    with watcher:
        total = utils.clip_grad_norm_([p], 1.0)
        opt = torch.optim.SGD([p], lr=0.1)
        sched.LambdaLR(opt, lambda s: 1.0)
    assert watcher.seen == {"clip", "sched"}
    assert abs(total.item() - 48**0.5) < 1e-5 and abs(p.grad.norm().item() - 1.0) < 1e-5
