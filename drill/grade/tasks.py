"""The registry of gradable tasks. Torch-free: the CLI validates ``--task`` with it.

A task is a name, the entry point the user's file must define, and the dotted path of an
object with ``checks(ctx)``, ``probes(ctx)`` and ``hypotheses(ctx)`` (see drill/grade/task_sdpa.py).
Adding a task is one ``register`` call and one module (a composite task also goes early in
DETECT_ORDER); the engine, the worker and the report need no change.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    name: str
    entry: str  # the function or class the user's file must define
    impl: str  # "module:attribute" of the task object

    def load(self):
        module, attr = self.impl.split(":")
        return getattr(importlib.import_module(module), attr)


TASKS: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> None:
    TASKS[spec.name] = spec


register(TaskSpec("sdpa", "scaled_dot_product_attention", "drill.grade.task_sdpa:TASK"))
register(TaskSpec("mha", "MultiHeadAttention", "drill.grade.task_module:MHA"))
register(TaskSpec("causal", "CausalSelfAttention", "drill.grade.task_module:CAUSAL"))
register(TaskSpec("kv_cache", "KVCacheAttention", "drill.grade.task_kv_cache:TASK"))
register(TaskSpec("flash", "flash_attention", "drill.grade.task_flash:TASK"))
register(TaskSpec("block", "TransformerBlock", "drill.grade.task_block:TASK"))
register(TaskSpec("padding", "make_attention_mask", "drill.grade.task_padding:TASK"))
register(TaskSpec("cross", "CrossAttention", "drill.grade.task_cross:TASK"))
register(TaskSpec("gqa", "GroupedQueryAttention", "drill.grade.task_gqa:TASK"))
register(TaskSpec("rope", "apply_rope", "drill.grade.task_rope:TASK"))


BENCH_TASKS = ("sdpa", "flash")  # `--bench` times entry points called as fn(q, k, v)

# A file may define helpers named like simpler tasks (a block built on its own
# CausalSelfAttention, an MHA calling its own scaled_dot_product_attention): composites win.
DETECT_ORDER = ("block", "kv_cache", "gqa", "cross", "causal", "mha", "flash", "rope", "padding", "sdpa")


def detect(names) -> TaskSpec | None:
    """The most composite task whose entry point the file defines."""
    defined = set(names)
    ordered = [TASKS[name] for name in DETECT_ORDER if name in TASKS] + [s for s in TASKS.values() if s.name not in DETECT_ORDER]
    return next((spec for spec in ordered if spec.entry in defined), None)
