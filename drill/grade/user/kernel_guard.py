"""Triton kernels on the user side: the interpreter's environment, and guard bands around every tensor a kernel gets.

Under ``TRITON_INTERPRET=1`` a kernel's loads and stores are raw addresses read with numpy: an
unmasked edge tile reads or writes the memory next to the tensor, which leaves every value right
(the neighbour is the next row) or corrupts the heap. So each launch gets copies of its tensor
arguments inside buffers banded with 0xFF bytes (NaN in every float dtype, -1 in the integers),
every load and store is checked against the addresses of the tensors' own elements (a row-strided
view's gaps are outside), the lanes outside are dropped before they touch memory, and the launch
raises :class:`KernelOutOfBounds` naming the first of them: detected, never a crash. Stdlib, torch
and numpy only; triton is imported by :func:`install` when the user's file has imported it.
"""

from __future__ import annotations

import os
import sys

from .loader import Ev

PAD = 4096  # bytes of guard band on each side: a multiple of every element size
SENTINEL = 0xFF


class KernelOutOfBounds(Exception):
    """A kernel launch read or wrote outside the tensors it was given (the judge names it ``kernel-mask-missing``)."""


def prepare(private: str, devices) -> None:
    """Environment for a user file that imports triton: its cache and home in the private folder (the only
    place Landlock lets it write), and the interpreter when the grade runs on CPU."""
    os.environ["TRITON_HOME"] = private
    os.environ["TRITON_CACHE_DIR"] = os.path.join(private, "triton-cache")
    if list(devices) == ["cpu"]:
        os.environ["TRITON_INTERPRET"] = "1"


def warm_interpreter() -> None:
    """Launch a 16-lane kernel once under the interpreter, here in the zygote: the first launch of a process
    builds the interpreter's patched language (~0.1-0.2 s) and every user side forked after it inherits that."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def double(x_ptr, n, BLOCK: tl.constexpr):
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n
        tl.store(x_ptr + lanes, tl.exp(tl.load(x_ptr + lanes, mask=mask)) * 2, mask=mask)

    double[(1,)](torch.zeros(16), 16, BLOCK=16)


def install() -> bool:
    """Guard the interpreter's launches, once the user's file has imported triton; False where there is nothing to guard."""
    if "triton" not in sys.modules:
        return False
    if os.environ.get("TRITON_INTERPRET") != "1":
        return False
    from triton.runtime import interpreter

    if getattr(interpreter.GridExecutor, "_drill_guarded", False):
        return False
    _Launch.patch(interpreter)
    return True


class _Launch:
    """The launch in progress: its valid element addresses and the first access outside them."""

    valid = None  # sorted uint64 byte addresses of every element of every tensor argument
    regions: list = []  # (name, first address, last address, element size, shape, the copy's data_ptr)
    bad: list = []  # (program, kind, count, address, element size)
    stored: set = set()  # the data_ptr of each copy the launch stored into

    @classmethod
    def patch(cls, interpreter) -> None:
        executor, builder = interpreter.GridExecutor, interpreter.InterpreterBuilder
        init = executor._init_args_hst
        load, store = builder.create_masked_load, builder.create_masked_store

        def guarded_init(self, args_dev, kwargs):
            import torch

            with torch._C.DisableTorchFunction():  # drill's copies are no op of the user's (--trace, the builtin rule)
                args_hst, kwargs_hst = init(self, args_dev, kwargs)
                named = list(zip(self.arg_names, args_hst)) + list(kwargs_hst.items())
                copies = _guarded_copies([(name, t) for name, t in named if _is_tensor(t)])
                cls.begin(copies)
            swap = {key: copy for key, (_name, copy, _buffer) in copies.items()}
            return [swap.get(id(t), t) for t in args_hst], {k: swap.get(id(t), t) for k, t in kwargs_hst.items()}

        def guarded_restore(self, args_dev, args_hst, kwargs, kwargs_hst):
            import torch

            written = []
            with torch._C.DisableTorchFunction():
                for dev, hst in list(zip(args_dev, args_hst)) + [(kwargs[k], kwargs_hst[k]) for k in kwargs]:
                    if not (_is_tensor(dev) and _is_tensor(hst) and hst.data_ptr() != dev.data_ptr()):
                        continue
                    # stored into, even with the values it held (torch.empty reuses a freed block: an identical earlier
                    # call's output), or changed
                    if hst.data_ptr() in cls.stored or not torch.equal(dev, hst):
                        dev.copy_(hst)
                        written.append(dev)
            for dev in written:  # one op per tensor the launch wrote, on the launch's line: --trace sees the kernel's output
                dev.clone()
            cls.finish()

        def guarded_load(self, ptrs, mask, other, cache_policy, is_volatile):
            return load(self, ptrs, cls.check(self, ptrs, mask, "load"), other, cache_policy, is_volatile)

        def guarded_store(self, ptrs, value, mask, cache_policy):
            return store(self, ptrs, value, cls.check(self, ptrs, mask, "store"), cache_policy)

        executor._init_args_hst, executor._restore_args_dev = guarded_init, guarded_restore
        builder.create_masked_load, builder.create_masked_store = guarded_load, guarded_store
        executor._drill_guarded = True

    @classmethod
    def begin(cls, copies: dict) -> None:
        import numpy as np
        import torch

        addresses, cls.regions, cls.bad, cls.stored = [], [], [], set()
        for name, copy, _buffer in copies.values():
            offsets = torch.zeros((), dtype=torch.int64)
            for size, stride in zip(copy.shape, copy.stride()):
                offsets = offsets[..., None] + torch.arange(size, dtype=torch.int64) * stride
            found = (offsets.reshape(-1).numpy().astype(np.uint64) * np.uint64(copy.element_size())) + np.uint64(copy.data_ptr())
            addresses.append(found)
            if found.size:
                cls.regions.append((name, int(found.min()), int(found.max()), copy.element_size(), list(copy.shape), copy.data_ptr()))
        cls.valid = np.unique(np.concatenate(addresses)) if addresses else np.zeros(0, dtype=np.uint64)

    @classmethod
    def check(cls, builder, ptrs, mask, kind):
        """``mask`` without the lanes whose address is no element of any tensor argument (recorded)."""
        import numpy as np

        if cls.valid is None:
            return mask
        active = np.broadcast_to(mask.data, ptrs.data.shape)
        where = np.searchsorted(cls.valid, ptrs.data)
        inside = (where < cls.valid.size) & (cls.valid[np.minimum(where, cls.valid.size - 1)] == ptrs.data)
        outside = active & ~inside
        if kind == "store":
            written = ptrs.data[active & inside]
            cls.stored.update(key for _, first, last, _, _, key in cls.regions if ((written >= first) & (written <= last)).any())
        if not outside.any():
            return mask
        if not cls.bad:
            size = ptrs.get_element_ty().primitive_bitwidth // 8
            cls.bad.append((tuple(builder.grid_idx), kind, int(outside.sum()), int(ptrs.data[outside].flat[0]), size))
        return type(mask)(active & inside, mask.dtype)

    @classmethod
    def finish(cls) -> None:
        bad, cls.valid = cls.bad, None
        if bad:
            program, kind, count, address, _ = bad[0]
            values = {"program": program, "n": count, "where": cls.describe(address)}
            if kind == "load":
                raise KernelOutOfBounds(
                    Ev("program {program} would load from {n} addresses outside the tensors it was given, the first {where}", **values)
                    if count > 1 else
                    Ev("program {program} would load from {n} address outside the tensors it was given, the first {where}", **values))  # fmt: skip
            raise KernelOutOfBounds(
                Ev("program {program} would store to {n} addresses outside the tensors it was given, the first {where}", **values)
                if count > 1 else
                Ev("program {program} would store to {n} address outside the tensors it was given, the first {where}", **values))  # fmt: skip

    @classmethod
    def describe(cls, address: int) -> Ev:
        """Where an address lies relative to the nearest tensor argument."""
        name, first, last, size, shape, _ = min(cls.regions, key=lambda r: min(abs(address - r[1]), abs(address - r[2])))
        if address > last:
            return Ev("{n} element(s) past the end of {name} (shape {shape})", n=(address - last) // size, name=name, shape=shape)
        if address < first:
            return Ev("{n} element(s) before the start of {name} (shape {shape})", n=(first - address) // size, name=name, shape=shape)
        return Ev("between the elements of {name} (shape {shape}) (a gap of a strided view)", name=name, shape=shape)


def _is_tensor(value) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "untyped_storage")


def _guarded_copies(named) -> dict:
    """{id(tensor): (name, its copy, buffer)}: one buffer per storage, 0xFF around and between the views' elements."""
    import torch

    buffers: dict[int, torch.Tensor] = {}
    copies = {}
    for name, t in named:
        storage = t.untyped_storage()
        key = storage.data_ptr()
        if key not in buffers:
            buffers[key] = torch.full((PAD + storage.nbytes() + PAD,), SENTINEL, dtype=torch.uint8)
        buffer = buffers[key]
        copy = torch.empty(0, dtype=t.dtype).set_(buffer.untyped_storage(), PAD // t.element_size() + t.storage_offset(),
                                                  t.size(), t.stride())  # fmt: skip
        copy.copy_(t)
        copies[id(t)] = (name, copy, buffer)
    return copies
