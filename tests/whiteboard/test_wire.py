"""The judge <-> user-side wire format: tensors survive the trip exactly, and anything that does not
follow the format is a WireError (the judge turns it into isolation.protocol), never a crash."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from drill.grade.user import wire  # noqa: E402


def trip(value):
    header, buffers = wire.encode(value)
    frame = wire.frame(header, buffers)
    head, payload = wire.frame_sizes(frame[: wire.FRAME.size])
    start = wire.FRAME.size
    parsed = wire.parse_header(frame[start : start + head])
    return wire.build(parsed["value"], wire.tensors_of(parsed, frame[start + head : start + head + payload]))


def test_tensors_and_structure_round_trip_exactly():
    x = torch.randn(2, 3, 5, dtype=torch.float64)
    value = trip({"out": (x, torch.arange(4), None), "mask": torch.rand(3, 3) > 0.5, "n": 3, "f": float("-inf")})
    assert torch.equal(value["out"][0], x) and value["out"][0].dtype == torch.float64
    assert torch.equal(value["out"][1], torch.arange(4)) and value["out"][2] is None
    assert value["mask"].dtype == torch.bool and value["n"] == 3 and value["f"] == float("-inf")
    half = torch.randn(4, 4).to(torch.bfloat16)
    assert torch.equal(trip(half), half)


def test_a_transposed_tensor_stays_transposed():
    x = torch.randn(2, 5, 3).transpose(1, 2)
    back = trip(x)
    assert torch.equal(back, x) and not back.is_contiguous()


def forged(header: dict, payload: bytes = b""):
    return wire.tensors_of(header, payload)


@pytest.mark.parametrize(
    "header, payload",
    [
        ({"tensors": [{"dtype": "object", "shape": [1], "perm": None, "device": "cpu", "grad": False}]}, b"x" * 8),
        ({"tensors": [{"dtype": "float32", "shape": [-1], "perm": None, "device": "cpu", "grad": False}]}, b""),
        ({"tensors": [{"dtype": "float32", "shape": [4], "perm": None, "device": "cpu", "grad": False}]}, b"x" * 8),
        ({"tensors": [{"dtype": "float32", "shape": [1], "perm": None, "device": "cpu", "grad": False}]}, b"x" * 8),
        ({"tensors": [{"dtype": "float32", "shape": [2, 2], "perm": [0, 0], "device": "cpu", "grad": False}]}, b"x" * 16),
        ({"tensors": [{"dtype": "float32", "shape": [1], "perm": None, "device": "meta", "grad": False}]}, b"x" * 4),
        ({"tensors": ["not a description"]}, b""),
    ],
    ids=["dtype", "negative-size", "short-payload", "long-payload", "permutation", "device", "description"],
)
def test_a_forged_tensor_description_is_refused(header, payload):
    with pytest.raises(wire.WireError):
        forged(header, payload)


def test_forged_frames_and_values_are_refused():
    with pytest.raises(wire.WireError):
        wire.frame_sizes(b'{"event": "report", "x": 1}\n'[: wire.FRAME.size])  # a forged JSON event, not a frame
    with pytest.raises(wire.WireError):
        wire.frame_sizes(wire.FRAME.pack(wire.MAGIC, 10, wire.MAX_PAYLOAD + 1))  # too large to buffer
    with pytest.raises(wire.WireError):
        wire.parse_header(b"{junk")
    with pytest.raises(wire.WireError):
        wire.parse_header(b"[" * 100_000)  # nested past Python's stack: a protocol failure, not a RecursionError
    with pytest.raises(wire.WireError):
        wire.build({"$t": 3}, [])  # a tensor that was not sent
    with pytest.raises(wire.WireError):
        wire.build({"__reduce__": ["os.system", "true"]}, [])  # no tag carries code
    with pytest.raises(wire.WireError):
        wire.build(json.loads('{"$f": "1e400"}'), [])
