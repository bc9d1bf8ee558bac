"""The wire format's recipes: a seeded generator, the toy model's step_fn and ring all-reduce's comm are
built on the user side from data, and a reply that carries one is refused as forged."""

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


def test_a_comm_recipe_copies_each_send_and_logs_it_into_the_tensor_sent():
    log = torch.zeros(9, 4, dtype=torch.int64)
    comm = roundtrip((wire.Comm(3, log),), recipes=True)[0]
    x = torch.tensor([1.0, 2.0])
    got = comm.send(0, 1, x)
    x += 10  # the receiver's copy does not see the sender change its tensor
    assert got.tolist() == [1.0, 2.0]
    comm.send(1, 2, torch.zeros(5))
    comm.send(2, 0, torch.zeros(1))
    comm.send(0, 1, torch.zeros(2))  # rank 0 sends a second time: a new round
    sent = comm._log  # the wire rebuilt the tensor: the judge gets it back as a modified input
    assert sent[0].tolist() == [4, 2, 0, 0]
    assert sent[1:5].tolist() == [[0, 1, 2, 1], [1, 2, 5, 1], [2, 0, 1, 1], [0, 1, 2, 2]]


def test_a_comm_refuses_what_no_rank_can_send():
    comm = roundtrip((wire.Comm(2, torch.zeros(3, 4, dtype=torch.int64)),), recipes=True)[0]
    with pytest.raises(ValueError, match=r"dst=2 is not a rank in 0\.\.1"):
        comm.send(0, 2, torch.zeros(1))
    with pytest.raises(ValueError, match="sends to itself"):
        comm.send(1, 1, torch.zeros(1))
    with pytest.raises(TypeError, match="not a list"):
        comm.send(0, 1, [1.0])
    for _ in range(3):  # past the log's two rows only the count grows
        comm.send(0, 1, torch.zeros(1))
    assert comm._log[0, 0].item() == 3 and comm._log[2].tolist() == [0, 1, 1, 2]


@pytest.mark.parametrize("value", [wire.Generator(1), wire.StepTable(torch.zeros(2, 3, 3, dtype=torch.float64)),
                                   wire.Comm(2, torch.zeros(3, 4, dtype=torch.int64))])
def test_recipes_in_a_reply_are_forged(value):
    with pytest.raises(wire.WireError, match="recipe outside a request"):
        roundtrip([value], recipes=False)


@pytest.mark.parametrize(
    "tree",
    [{"$gen": [-1, "cpu"]}, {"$gen": [2**63, "cpu"]}, {"$gen": [1, "disk"]}, {"$gen": [1.5, "cpu"]}, {"$gen": [1]},
     {"$step": {"$t": 0}}, {"$step": 3}, {"$comm": [0, {"$t": 0}]}, {"$comm": [65, {"$t": 0}]}, {"$comm": [2, {"$t": 0}]},
     {"$comm": [2]}],
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
