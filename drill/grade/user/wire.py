"""The judge <-> user-side wire format: a JSON header and raw tensor bytes, nothing that can carry code.

A frame is MAGIC, the header length (uint32), the payload length (uint64), the JSON header, then
the payload: the bytes of the header's ``tensors`` back to back. JSON values carry three tagged
forms: ``{"$t": i}`` the i-th tensor, ``{"$h": n}`` a handle (an object kept on the user side),
``{"$tuple": [...]}`` and ``{"$dict": [[key, value], ...]}``. :func:`decode` checks every field
before it builds a tensor and raises :class:`WireError` for anything else, so a forged or
truncated reply is a finding for the judge, never a crash and never a pass.

Three recipes let the judge hand the user's code an object that is state or code, not data, without
sending either: ``{"$gen": [seed, device]}`` (a seeded torch.Generator), ``{"$step": tensor}`` or ``{"$step": [tensor, log]}``
(drill's toy language model built from its table, :class:`drill.grade.user.toys.StepFn`, which counts the
token pairs of the prefixes it is asked about into ``log``, an int64 [V, V] tensor sent with the call) and
``{"$config": [[name, number or string], ...]}`` (a config object read by attribute, as nanoGPT's
and Hugging Face's constructors take one: a types.SimpleNamespace). Only requests may carry them
(``build(..., recipes=True)`` on the user side); in a reply they are forged.
``{"$params": [[value, grad], ...]}`` builds nn.Parameters whose ``.grad`` is the gradient sent
(:mod:`params`), so what the user's code does to the gradients comes back as modified inputs.
``{"$linear": [weight, bias or None]}`` builds an nn.Linear with those values (LoRA's base layer).
``{"$comm": [n_ranks, log]}`` builds the simulated collective of :mod:`comm` (ring all-reduce's ``comm``):
it records every send into ``log``, an int64 tensor sent with the call, so the record comes back as a
modified input in the same reply as the result.
"""

from __future__ import annotations

import ctypes
import json
import math
import re
import struct
from dataclasses import dataclass

import torch

from .loader import Ev

MAGIC = b"DRL1"
FRAME = struct.Struct("!4sIQ")
MAX_HEADER = 16 << 20
MAX_PAYLOAD = 1 << 30  # no call of the battery returns anywhere near this much
MAX_DIMS = 12
INT_BOUND = 2**63  # a number beyond int64 fits no tensor and overflows a float64 near 10**308: nothing a task returns
DTYPES = {
    name: getattr(torch, name)
    for name in ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
}
NAMES = {dtype: name for name, dtype in DTYPES.items()}


class WireError(Exception):
    """A message that does not follow this format."""


class Unsendable(TypeError):
    """A value the user's code returned that the wire cannot carry; the message (an Ev) says what it is."""


@dataclass(frozen=True)
class Handle:
    """An object that stays on the user side (a module, a cache object), named by its number."""

    id: int


@dataclass(frozen=True)
class Generator:
    """A torch.Generator for the user side, sent as its seed and device (a generator is state, not data)."""

    seed: int
    device: str = "cpu"


@dataclass(frozen=True)
class StepTable:
    """A toy model's ``step_fn`` for the user side, sent as its table (see drill.grade.user.toys), and the int64
    [V, V] tensor it counts the prefixes' token pairs into, if any (it comes back as a modified input)."""

    table: torch.Tensor
    log: torch.Tensor | None = None


@dataclass(frozen=True)
class Config:
    """A config object for the user's constructor (``config.n_embd``), sent as its plain fields."""

    fields: tuple[tuple[str, object], ...]


def _plain(value) -> bool:
    return value is None or type(value) in (bool, int, str) or (type(value) is float and math.isfinite(value))


DEVICE = re.compile(r"cpu|cuda(:[0-9]{1,2})?")


@dataclass(frozen=True)
class Params:
    """Parameters with gradients for the user side (``clip_grad_norm(parameters, ...)``), sent as
    (value, grad or None) pairs; the user side's changes to a grad come back into these tensors."""

    pairs: tuple[tuple[torch.Tensor, torch.Tensor | None], ...]


@dataclass(frozen=True)
class Linear:
    """An nn.Linear for the user's constructor (``LoRALinear(base, r, alpha)``), sent as its weight
    ``[out, in]`` and bias ``[out]`` or None; the user side builds the layer."""

    weight: torch.Tensor
    bias: torch.Tensor | None = None


@dataclass(frozen=True)
class RowStrided:
    """A 2-D tensor for the user side as a row-strided view (``wide[:, :n]`` of a NaN-filled ``[m, n + pad]``
    buffer): the wire sends contiguous bytes, and kernel tasks must see rows whose stride is not their length."""

    tensor: torch.Tensor
    pad: int


@dataclass(frozen=True)
class Strided:
    """A tensor for the user side as a view with the given element strides (a transposed matrix is strides
    ``(1, m)``) over a NaN-filled buffer: the wire sends contiguous bytes, and a GEMM kernel must take any layout."""

    tensor: torch.Tensor
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Comm:
    """A simulated collective for the user side (``comm.send(src, dst, tensor)``) over ``n_ranks`` ranks,
    sent as that number and its send log, an int64 ``[capacity + 1, 4]`` tensor (drill.grade.user.comm)."""

    n_ranks: int
    log: torch.Tensor


def encode(value, fallback=None, collect: list | None = None) -> tuple[dict, list[bytes]]:
    """(header, buffers). ``fallback(obj) -> Handle`` for objects that are not plain data;
    ``collect`` receives the tensors in the order the header lists them.

    On the user side ``value`` is the user's: types are read with ``type()`` (a fake ``__class__``
    cannot pass for a tensor), containers and numbers through their base class's own methods (a
    subclass's ``__iter__``, ``__len__``, ``__index__`` never run), tensors with their subclass's
    ``__torch_function__`` off. What cannot be sent raises :class:`Unsendable`."""
    tensors: list[dict] = []
    buffers: list[bytes] = []

    def enc(v, depth=0):
        if depth > 32:
            raise Unsendable(Ev("a value nested more than {n} levels deep", n=32))
        kind = type(v)
        if v is None or kind is bool:
            return v
        if issubclass(kind, int):  # bool was above: it has no subclasses
            n = int.__int__(v)
            if not -INT_BOUND <= n < INT_BOUND:
                raise Unsendable(Ev("the integer {n}, beyond any tensor's range (|n| < 2**63)", n=_digits(n)))
            return n
        if issubclass(kind, float):
            x = float.__float__(v)
            return x if math.isfinite(x) else {"$f": repr(x)}
        if issubclass(kind, str):
            return str.__str__(v)
        if issubclass(kind, torch.Tensor):
            t = plain_tensor(v)
            tensors.append(_describe(t, buffers))
            if collect is not None:
                collect.append(t)
            return {"$t": len(tensors) - 1}
        if kind is Handle:
            return {"$h": v.id}
        if kind is Generator:
            return {"$gen": [v.seed, v.device]}
        if kind is StepTable:
            return {"$step": enc(v.table, depth + 1) if v.log is None else [enc(v.table, depth + 1), enc(v.log, depth + 1)]}
        if kind is Params:
            return {"$params": [[enc(d, depth + 1), enc(g, depth + 1)] for d, g in v.pairs]}
        if kind is RowStrided:
            return {"$strided": [enc(v.tensor, depth + 1), int(v.pad)]}
        if kind is Strided:
            return {"$view": [enc(v.tensor, depth + 1), [int(n) for n in v.strides]]}
        if kind is Comm:
            return {"$comm": [int(v.n_ranks), enc(v.log, depth + 1)]}
        if kind is Linear:
            return {"$linear": [enc(v.weight, depth + 1), enc(v.bias, depth + 1)]}
        if kind is Config:
            if not all(isinstance(k, str) and _plain(x) for k, x in v.fields):
                raise TypeError("a config carries names and plain values only")
            return {"$config": [[k, x] for k, x in v.fields]}
        if issubclass(kind, tuple):
            return {"$tuple": [enc(x, depth + 1) for x in tuple.__iter__(v)]}
        if issubclass(kind, list):
            return [enc(x, depth + 1) for x in list.__iter__(v)]
        if issubclass(kind, dict):
            items = list(dict.items(v))
            if all(type(k) is str for k, _ in items):
                return {"$dict": [[k, enc(x, depth + 1)] for k, x in items]}
        if fallback is not None:
            return {"$h": fallback(v).id}
        raise Unsendable(Ev("a {type}", type=str(kind.__name__)))

    return {"value": enc(value), "tensors": tensors}, buffers


def _digits(n: int) -> str:
    return str(n) if abs(n) < 10**30 else f"{'-' if n < 0 else ''}10**{math.log10(abs(n)):.0f}"


def plain_tensor(t: torch.Tensor) -> torch.Tensor:
    """``t`` as a plain torch.Tensor over the same data, without running a subclass's
    ``__torch_function__`` or any method it overrides (a returned tensor subclass is the user's code)."""
    if type(t) is torch.Tensor:
        return t
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.as_subclass(t, torch.Tensor)


def _describe(t: torch.Tensor, buffers: list[bytes]) -> dict:
    if t.layout != torch.strided or t.dtype not in NAMES:
        raise Unsendable(Ev("a {layout} {dtype} tensor", layout=str(t.layout), dtype=str(t.dtype)))
    data = t.detach()
    nbytes = data.numel() * data.element_size()
    if nbytes > MAX_PAYLOAD:
        stored = data.untyped_storage().nbytes() if data.device.type != "meta" else 0
        values = {"n": data.numel(), "shape": list(data.shape), "size": _gib(nbytes), "limit": _gib(MAX_PAYLOAD)}
        raise Unsendable(Ev("a view of {n:,} elements (shape {shape}, {size} once copied), more than drill reads back ({limit})", **values)
                         if stored < nbytes else
                         Ev("a tensor of {n:,} elements (shape {shape}, {size} once copied), more than drill reads back ({limit})", **values))  # fmt: skip
    order = sorted(range(data.dim()), key=lambda d: -data.stride(d))
    perm = None
    if data.dim() > 1 and order != list(range(data.dim())) and data.permute(order).is_contiguous():
        perm, data = order, data.permute(order)  # keep a transposed input transposed
    data = data.cpu().contiguous()
    buffers.append(ctypes.string_at(data.data_ptr(), nbytes) if nbytes else b"")
    return {
        "dtype": NAMES[t.dtype],
        "shape": list(data.shape),
        "perm": perm,
        "device": str(t.device),
        "grad": bool(t.requires_grad),
    }


def _gib(n: int) -> str:
    return f"{n / 2**30:,.3g} GiB"


def frame(header: dict, buffers: list[bytes]) -> bytes:
    head = json.dumps(header, allow_nan=False).encode()
    payload = b"".join(buffers)
    return FRAME.pack(MAGIC, len(head), len(payload)) + head + payload


def frame_sizes(prefix: bytes) -> tuple[int, int]:
    """(header, payload) lengths from a frame's first FRAME.size bytes."""
    magic, head, payload = FRAME.unpack(prefix)
    if magic != MAGIC or head > MAX_HEADER or payload > MAX_PAYLOAD:
        raise WireError("not a frame of drill's wire format")
    return head, payload


def parse_header(raw: bytes) -> dict:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: a forged header nested past the stack
        raise WireError(f"unreadable header ({exc})") from None
    if not isinstance(header, dict) or not isinstance(header.get("tensors"), list):
        raise WireError("the header is not an object with a tensor list")
    return header


def tensors_of(header: dict, payload: bytes, devices=("cpu",)) -> list[torch.Tensor]:
    """The header's tensors, read from ``payload`` after checking each description."""
    buf = bytearray(payload)
    out, offset = [], 0
    for d in header["tensors"]:
        if not isinstance(d, dict):
            raise WireError("a tensor description is not an object")
        dtype = DTYPES.get(d.get("dtype"))
        shape, perm, device = d.get("shape"), d.get("perm"), d.get("device")
        if dtype is None:
            raise WireError(f"unknown dtype {d.get('dtype')!r}")
        if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(type(n) is int and 0 <= n < 2**40 for n in shape)):
            raise WireError(f"bad shape {shape!r}")
        if perm is not None and (not isinstance(perm, list) or sorted(perm) != list(range(len(shape)))):
            raise WireError(f"bad permutation {perm!r}")
        if device not in devices or type(d.get("grad")) is not bool:
            raise WireError(f"bad device {device!r} or grad flag")
        numel = math.prod(shape)
        size = numel * torch.empty((), dtype=dtype).element_size()
        if offset + size > len(buf):
            raise WireError("the payload is shorter than its tensors")
        t = torch.frombuffer(buf, dtype=dtype, count=numel, offset=offset) if numel else torch.empty(0, dtype=dtype)
        offset += size
        t = t.reshape(shape)
        if perm is not None:
            t = t.permute([perm.index(i) for i in range(len(perm))])
        out.append(t.to(device) if device != "cpu" else t)
    if offset != len(buf):
        raise WireError("the payload is longer than its tensors")
    return out


def build(tree, tensors: list[torch.Tensor], handle=Handle, recipes: bool = False):
    """The value of an encoded tree; ``handle(n)`` turns {"$h": n} into an object; ``recipes``
    (the user side reading a request) builds the objects that ``$gen`` and ``$step`` describe."""

    def dec(v, depth=0):
        if depth > 32:
            raise WireError("nested too deeply")
        if type(v) is int and not -INT_BOUND <= v < INT_BOUND:
            raise WireError(f"an integer beyond int64 ({_digits(v)})")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if isinstance(v, dict) and len(v) == 1:
            (tag, inner), = v.items()
            if tag == "$t" and type(inner) is int and 0 <= inner < len(tensors):
                return tensors[inner]
            if tag == "$h" and type(inner) is int:
                return handle(inner)
            if tag == "$f" and inner in ("inf", "-inf", "nan"):
                return float(inner)
            if tag in ("$gen", "$step", "$config", "$comm") and not recipes:
                raise WireError(f"a {tag} recipe outside a request")
            if tag == "$gen" and isinstance(inner, list) and len(inner) == 2 and type(inner[0]) is int \
                    and 0 <= inner[0] < 2**63 and isinstance(inner[1], str) and DEVICE.fullmatch(inner[1]):
                return torch.Generator(device=inner[1]).manual_seed(inner[0])
            if tag == "$step":
                from .toys import StepFn

                table, log = [dec(x, depth + 1) for x in inner] if isinstance(inner, list) and len(inner) == 2 else (dec(inner, depth + 1), None)
                if not (isinstance(table, torch.Tensor) and table.dtype == torch.float64 and table.dim() == 3
                        and table.shape[0] == 2 and table.shape[1] == table.shape[2] > 0):  # fmt: skip
                    raise WireError("a $step recipe without a [2, V, V] float64 table")
                if log is not None and not (isinstance(log, torch.Tensor) and log.dtype == torch.int64 and log.shape == table.shape[1:]):
                    raise WireError("a $step recipe whose log is not an int64 [V, V] tensor")
                return StepFn(table, log)
            if tag == "$params":
                if not recipes:
                    raise WireError("a $params recipe outside a request")
                pairs = [dec(p, depth + 1) for p in inner] if isinstance(inner, list) else None
                if pairs is None or not all(
                    isinstance(p, list) and len(p) == 2 and isinstance(p[0], torch.Tensor) and p[0].is_floating_point()
                    and (p[1] is None or (isinstance(p[1], torch.Tensor) and p[1].shape == p[0].shape and p[1].dtype == p[0].dtype))
                    for p in pairs
                ):  # fmt: skip
                    raise WireError("a $params recipe without (float tensor, matching grad or None) pairs")
                from .params import grad_parameters

                return grad_parameters(pairs)
            if tag == "$linear":
                if not recipes:
                    raise WireError("a $linear recipe outside a request")
                pair = [dec(p, depth + 1) for p in inner] if isinstance(inner, list) and len(inner) == 2 else None
                if pair is None or not (
                    isinstance(pair[0], torch.Tensor) and pair[0].is_floating_point() and pair[0].dim() == 2
                    and (pair[1] is None or (isinstance(pair[1], torch.Tensor) and pair[1].shape == pair[0].shape[:1]
                                             and pair[1].dtype == pair[0].dtype))
                ):  # fmt: skip
                    raise WireError("a $linear recipe without a 2-D float weight and a matching bias or None")
                from .params import linear_layer

                return linear_layer(*pair)
            if tag == "$strided":
                pair = [dec(inner[0], depth + 1), inner[1]] if recipes and isinstance(inner, list) and len(inner) == 2 else None
                if pair is None or not (isinstance(pair[0], torch.Tensor) and pair[0].dim() == 2 and pair[0].is_floating_point()
                                        and type(pair[1]) is int and 1 <= pair[1] <= 64):  # fmt: skip
                    raise WireError("a $strided recipe without a 2-D float tensor and a pad of 1..64")
                wide = torch.full((pair[0].shape[0], pair[0].shape[1] + pair[1]), float("nan"), dtype=pair[0].dtype, device=pair[0].device)
                wide[:, : pair[0].shape[1]] = pair[0]
                return wide[:, : pair[0].shape[1]]
            if tag == "$view":
                pair = [dec(inner[0], depth + 1), inner[1]] if recipes and isinstance(inner, list) and len(inner) == 2 else None
                if pair is None or not (isinstance(pair[0], torch.Tensor) and pair[0].is_floating_point()
                                        and _view_extent(pair[0].shape, pair[1])):  # fmt: skip
                    raise WireError("a $view recipe without a float tensor and one stride per dim that keeps its elements apart")
                view = torch.full((_view_extent(pair[0].shape, pair[1]),), float("nan"), dtype=pair[0].dtype,
                                  device=pair[0].device).as_strided(pair[0].shape, pair[1])  # fmt: skip
                view.copy_(pair[0])
                return view
            if tag == "$comm":
                pair = [inner[0], dec(inner[1], depth + 1)] if isinstance(inner, list) and len(inner) == 2 else None
                if pair is None or not (type(pair[0]) is int and 1 <= pair[0] <= 64 and isinstance(pair[1], torch.Tensor)
                                        and pair[1].dtype == torch.int64 and pair[1].dim() == 2 and pair[1].shape[0] >= 1
                                        and pair[1].shape[1] == 4):  # fmt: skip
                    raise WireError("a $comm recipe without 1..64 ranks and an int64 [n, 4] log")
                from .comm import Comm as SimulatedComm

                return SimulatedComm(*pair)
            if tag == "$config" and isinstance(inner, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and p[0].isidentifier() and _plain(p[1])
                for p in inner
            ):
                from types import SimpleNamespace

                return SimpleNamespace(**dict(inner))
            if tag == "$tuple" and isinstance(inner, list):
                return tuple(dec(x, depth + 1) for x in inner)
            if tag == "$dict" and isinstance(inner, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in inner
            ):
                return {k: dec(x, depth + 1) for k, x in inner}
        raise WireError(f"unexpected value {str(v)[:80]}")

    return dec(tree)


def _view_extent(shape, strides) -> int:
    """Elements of the buffer a view with these strides spans, or 0 when they are not 1..2**16 ints, one per dim,
    each past the span of the smaller ones (no two elements share an address), or the span passes 2**24."""
    if not (isinstance(strides, list) and len(strides) == len(shape) and all(type(n) is int and 1 <= n <= 1 << 16 for n in strides)):
        return 0
    extent = 1
    for stride, size in sorted(zip(strides, shape)):
        if size > 1 and stride < extent:
            return 0
        extent += (size - 1) * stride
    return extent if extent <= 1 << 24 else 0


def send(sock, header: dict, buffers=()) -> None:
    sock.sendall(frame(header, list(buffers)))


def recv_exact(sock, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv(sock) -> tuple[dict, bytes]:
    """One frame, blocking (the user side's loop)."""
    head, payload = frame_sizes(recv_exact(sock, FRAME.size))
    return parse_header(recv_exact(sock, head)), recv_exact(sock, payload)
