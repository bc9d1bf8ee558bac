"""The wire format's two recipes: a seeded generator and the toy model's step_fn are built on the
user side from data, and a reply that carries either is refused as forged."""

from __future__ import annotations

import json

import pytest
import torch

from drill.grade.user import toys, wire


def roundtrip(value, recipes: bool):
    header, buffers = wire.encode(value)
    frame = wire.frame(header, buffers)
    head, payload = wire.frame_sizes(frame[: wire.FRAME.size])
    start = wire.FRAME.size
    parsed = wire.parse_header(frame[start : start + head])
    tensors = wire.tensors_of(parsed, frame[start + head : start + head + payload])
    return wire.build(parsed["value"], tensors, recipes=recipes)


def test_a_generator_recipe_builds_the_seeded_generator():
    gen = roundtrip((wire.Generator(1234),), recipes=True)[0]
    assert isinstance(gen, torch.Generator)
    assert torch.equal(torch.rand(5, generator=gen), torch.rand(5, generator=torch.Generator().manual_seed(1234)))


def test_a_step_recipe_builds_the_toy_model():
    table = torch.randn(2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    step = roundtrip({"f": wire.StepTable(table)}, recipes=True)["f"]
    prefixes = torch.tensor([[0], [3]])
    assert torch.equal(step(prefixes), toys.log_probs(table, prefixes))
    assert torch.allclose(step(torch.tensor([[1, 2, 4]])).exp().sum(-1), torch.ones(1, dtype=torch.float64))


@pytest.mark.parametrize("value", [wire.Generator(1), wire.StepTable(torch.zeros(2, 3, 3, dtype=torch.float64))])
def test_recipes_in_a_reply_are_forged(value):
    with pytest.raises(wire.WireError, match="recipe outside a request"):
        roundtrip([value], recipes=False)


@pytest.mark.parametrize(
    "tree",
    [{"$gen": [-1, "cpu"]}, {"$gen": [2**63, "cpu"]}, {"$gen": [1, "disk"]}, {"$gen": [1.5, "cpu"]}, {"$gen": [1]},
     {"$step": {"$t": 0}}, {"$step": 3}],
)
def test_malformed_recipes_are_wire_errors(tree):
    tensors = [torch.zeros(3, 3, dtype=torch.float64)]  # a 2-D table: not [2, V, V]
    with pytest.raises(wire.WireError):
        wire.build(json.loads(json.dumps(tree)), tensors, recipes=True)


def test_step_fn_names_bad_prefixes():
    step = toys.StepFn(torch.zeros(2, 4, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"prefixes \[N, t\]"):
        step(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="integer token ids"):
        step(torch.zeros(1, 2))
    with pytest.raises(ValueError, match=r"0\.\.3"):
        step(torch.tensor([[4]]))
