"""The wire's ``$linear`` recipe and the user side's module-state ops (attr, describe, assign) that the
lora and moe tasks grade with: a layer built from the judge's values, a method or submodule read by
path, a returned module described, parameters overwritten on both sides."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from drill.grade import remote
from drill.grade.user import wire
from drill.grade.user.wire import Handle, Linear


def roundtrip(value, recipes: bool):
    header, buffers = wire.encode(value)
    frame = wire.frame(header, buffers)
    head, payload = wire.frame_sizes(frame[: wire.FRAME.size])
    start = wire.FRAME.size
    parsed = wire.parse_header(frame[start : start + head])
    tensors = wire.tensors_of(parsed, frame[start + head : start + head + payload])
    return wire.build(parsed["value"], tensors, recipes=recipes)


def test_a_linear_recipe_builds_the_layer_with_the_judges_values():
    weight, bias = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    layer = roundtrip((Linear(weight, bias),), recipes=True)[0]
    assert isinstance(layer, nn.Linear) and (layer.in_features, layer.out_features) == (4, 3)
    assert layer.weight.dtype == torch.float64 and torch.equal(layer.weight.detach(), weight)
    assert torch.equal(layer.bias.detach(), bias)
    assert roundtrip((Linear(weight.float()),), recipes=True)[0].bias is None


def test_a_linear_recipe_in_a_reply_or_with_a_bad_bias_is_refused():
    with pytest.raises(wire.WireError, match="recipe outside a request"):
        roundtrip((Linear(torch.zeros(2, 2)),), recipes=False)
    with pytest.raises(wire.WireError, match="2-D float weight"):
        roundtrip((Linear(torch.zeros(2, 2), torch.zeros(3)),), recipes=True)


SOURCE = '''
import torch
from torch import nn


class Wrapper(nn.Module):
    def __init__(self, base, k):
        super().__init__()
        self.base = base
        self.experts = nn.ModuleList(nn.Linear(base.in_features, base.in_features) for _ in range(k))

    def forward(self, x):
        return self.base(x)

    def doubled(self):
        layer = nn.Linear(self.base.in_features, self.base.out_features)
        with torch.no_grad():
            layer.weight.copy_(2 * self.base.weight)
        return layer
'''


@pytest.fixture
def user(tmp_path):
    path = tmp_path / "wrapper.py"
    path.write_text(SOURCE)
    side = remote.UserProcess(remote.zygote(), timeout=30, device=torch.device("cpu"), memory=None)
    side.load(str(path))
    yield side
    side.close()


def test_attr_describe_and_assign_reach_the_users_module(user):
    weight = torch.randn(2, 3)
    module = user.instantiate(user.entry("Wrapper"), (Linear(weight, torch.zeros(2)), 2), seed=0,
                              device=torch.device("cpu"), dtype=torch.float32)  # fmt: skip
    assert torch.equal(module.base.weight, weight)
    method = user.attribute(module, "doubled")
    assert isinstance(method, Handle)
    layer = user.describe(user.call(method, (), {}))
    assert layer.class_name == "Linear" and torch.equal(layer.weight, 2 * weight)
    expert = user.attribute(module, "experts.1")
    x = torch.randn(4, 3)
    assert torch.allclose(user.call(expert, (x,), {}), module.experts[1](x))

    new = torch.randn(2, 3)
    user.assign(module, {"base.weight": new})
    assert torch.equal(module.base.weight, new)  # the shadow follows
    assert torch.equal(user.attribute(module, "base.weight"), new)
    assert torch.allclose(user.call(module, (x,), {}), x @ new.T)


def test_reading_a_missing_attribute_or_assigning_an_unknown_parameter_is_the_users_error(user):
    module = user.instantiate(user.entry("Wrapper"), (Linear(torch.randn(2, 3)), 1), seed=0,
                              device=torch.device("cpu"), dtype=torch.float32)  # fmt: skip
    with pytest.raises(remote.UserCodeError, match="merged"):
        user.attribute(module, "merged")
    with pytest.raises(remote.UserCodeError, match="no parameter 'B.weight'"):
        user.assign(module, {"B.weight": torch.zeros(2, 2)})
