"""What every check needs: the user's entry point, the device, seeds, and the way to call user code.

User code never runs in this process: ``call`` on a handle or a UserModule is a request to the
user side (drill.grade.remote), and what comes back is tensors and handles.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from drill.grade.remote import UserCodeError, UserModule, UserProcess
from drill.grade.report import Check
from drill.grade.user.wire import Handle
from drill.text.messages import Ev


@dataclass
class Context:
    path: Path
    entry: Handle  # the user's function or class, on the user side
    device: torch.device
    user: UserProcess
    seed: int = 0
    allow_builtins: bool = False

    @property
    def dtypes(self) -> list[torch.dtype]:
        """fp32 everywhere; on CUDA also the half precisions."""
        if self.device.type == "cuda":
            return [torch.float32, torch.float16, torch.bfloat16]
        return [torch.float32]

    def generator(self, offset: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1000 + offset)

    @contextmanager
    def edge_case(self, fixed: bool):
        """Inputs from the fixed seed 0 while ``fixed``: an edge case (logits ~1e3, rows offset by 1e4) is built
        to sit just inside a correct implementation's rounding, and drawn values could push a correct file
        past it; the grade's own seed varies every other check's inputs."""
        grade_seed = self.seed
        if fixed:
            self.seed = 0
        try:
            yield
        finally:
            self.seed = grade_seed

    def sizes(self, offset: int, *ranges: tuple[int, int], avoid: tuple[int, ...] = ()) -> tuple[int, ...]:
        """One size per inclusive (low, high) range, drawn from the grade's seed, no two equal nor equal to one in
        ``avoid`` (a transposed axis still shows). Besides the fixed edge cases, numerical checks also run on these:
        a file right only at the grader's fixed shapes fails, and ``--seed N`` draws the same ones again."""
        rng = random.Random(self.seed * 1000 + offset)
        for _ in range(1000):
            drawn = tuple(rng.randint(low, high) for low, high in ranges)
            if len(set(drawn)) == len(drawn) and not set(drawn) & set(avoid):
                return drawn
        raise ValueError(f"no distinct sizes in {ranges}")

    def randn(self, *shape, gen: torch.Generator, dtype=torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64).to(self.device, dtype)

    def call(self, fn, *args, watch: bool = True, **kwargs):
        """Run user code: remotely for a handle or a user module (under the builtin spy when ``watch``),
        here for a judge-side callable that drives it (a backward pass through remote outputs).
        Any failure of the user's code becomes a UserCodeError."""
        if isinstance(fn, (Handle, UserModule)):
            return self.user.call(fn, args, kwargs, watch=watch)
        try:
            return fn(*args, **kwargs)
        except UserCodeError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. backward through an output that has no graph
            if self.user.stopped:
                raise self.user.stopped from None
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            name = type(exc).__name__
            raise UserCodeError(Ev("raised {type}: {text}", type=name, text=text) if text else Ev("raised {type}", type=name)) from None

    def call_each(self, fn, arg_lists: list[tuple]) -> list:
        """``fn(*args)`` for each of ``arg_lists``, in one round trip to the user side (no gradients)."""
        if isinstance(fn, Handle):
            return self.user.call_each(fn, arg_lists)
        return [self.call(fn, *args) for args in arg_lists]

    def largest(self, fn, *args, **kwargs):
        """(result, (elements, shape, op)) of the largest tensor any op of the call produced, under no_grad."""
        return self.user.call(fn, args, kwargs, largest=True)

    def instantiate(self, args: tuple, dtype) -> UserModule:
        """``entry(*args)`` seeded by ``seed``, on the device in ``dtype``, in eval mode."""
        return self.user.instantiate(self.entry, args, seed=self.seed, device=self.device, dtype=dtype)


@dataclass(frozen=True)
class CheckDef:
    """A check to run: ``run`` returns the finished Check's status, message and codes."""

    id: str
    category: str
    run: Callable[[], Check]


class WrongShape(Exception):
    """The user's output does not have the shape the contract requires."""


def outcome(status: str, message: Ev | str = "", *codes: str) -> Check:
    """A Check without id/category; the engine fills those in from the CheckDef."""
    return Check("", "", status, message, list(codes))

