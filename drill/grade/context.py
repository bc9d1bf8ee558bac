"""What every check needs: the user's entry point, the device, seeds, and a safe way to call user code."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from drill.grade.loader import UserCodeError, describe_exception
from drill.grade.report import Check
from drill.grade.rules import BuiltinSpy


@dataclass
class Context:
    path: Path
    entry: object  # the user's function or class
    device: torch.device
    seed: int = 0
    allow_builtins: bool = False
    spy: BuiltinSpy = field(default_factory=BuiltinSpy)

    @property
    def dtypes(self) -> list[torch.dtype]:
        """fp32 everywhere; on CUDA also the half precisions."""
        if self.device.type == "cuda":
            return [torch.float32, torch.float16, torch.bfloat16]
        return [torch.float32]

    def generator(self, offset: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1000 + offset)

    def randn(self, *shape, gen: torch.Generator, dtype=torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64).to(self.device, dtype)

    def call(self, fn: Callable, *args, watch: bool = True, **kwargs):
        """Run user code, under the builtin spy when ``watch``; any exception becomes a UserCodeError.

        Backward passes run unwatched: the spy would make autograd import sympy (seconds), and
        a builtin used in backward was already seen in forward.
        """
        try:
            if not watch:
                return fn(*args, **kwargs)
            with self.spy:
                return fn(*args, **kwargs)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's failure is the finding
            raise UserCodeError(describe_exception(exc, self.path), exc) from None


@dataclass(frozen=True)
class CheckDef:
    """A check to run: ``run`` returns the finished Check's status, message and codes."""

    id: str
    category: str
    run: Callable[[], Check]


class WrongShape(Exception):
    """The user's output does not have the shape the contract requires."""


def outcome(status: str, message: str = "", *codes: str) -> Check:
    """A Check without id/category; the engine fills those in from the CheckDef."""
    return Check("", "", status, message, list(codes))
