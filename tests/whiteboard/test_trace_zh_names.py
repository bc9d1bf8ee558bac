"""Every reference step the trace can name has a Chinese name (``Case.zh``), for ``drill grade --trace --lang zh``.

A step name needs one when it holds an English word: 3+ ASCII letters that are not a code identifier or
a function name, or a short word such as "of" (``merged heads``, ``k chunk 1``, ``sum of exp``; not
``weights·v``, ``log-sum-exp``, ``x Wᵀ``). The cases
are built as a grade builds them, from each task's own solution.py in a user process, so names made in
loops are checked as the trace shows them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from traced import user_context

from drill.grade.tasks import TASKS
from drill.grade.trace_match import Case
from drill.grade.tracing import declared

TASK_DIR = Path(__file__).parents[2] / "drill" / "grade" / "tasks"
DECLARED = sorted(d.name for d in TASK_DIR.iterdir() if (d / "intermediates.py").exists())

# words a step name may keep in both languages: the names code gives these tensors, and functions
IDENTIFIERS = {"scores", "scaled", "masked", "weights", "output", "logits", "weight", "bias", "context", "lengths", "positions",
               "slopes", "margin", "scale", "gate", "nll", "absmax", "grad", "exp", "log", "sum", "max", "min", "cos", "sin",
               "elu", "silu", "sigmoid", "softmax", "round", "rms", "std", "eps", "base", "freq"}  # fmt: skip
SHORT_WORDS = {"of", "to", "in", "on", "by", "at", "an", "as", "or"}  # 2-letter words that are English, not code (dQ, ln, up)
WORD = re.compile(r"(?<!\w)[A-Za-z]{2,}(?!\w)")  # a whole word: c_kv, d_out, W_uk, ln1 are identifiers
CJK = re.compile(r"[\u4e00-\u9fff]")


def needs_zh(name: str) -> bool:
    return any(word not in IDENTIFIERS and (len(word) > 2 or word in SHORT_WORDS) for word in WORD.findall(name))


def problems(case: Case) -> list[str]:
    """What is wrong with a case's Chinese names: a word step without one, one for no step, one that is not Chinese."""
    names = [name for name, _ in case.intermediates]
    found = [f"no zh for {name!r}" for name in names if needs_zh(name) and name not in case.zh]
    found += [f"zh for {name!r}, which is no step" for name in case.zh if name not in names]
    found += [f"zh for {name!r} is not Chinese: {zh!r}" for name, zh in case.zh.items() if not CJK.search(zh)]
    if case.label and not CJK.search(case.label[1]):
        found.append(f"the label {case.label[0]!r} has no Chinese: {case.label[1]!r}")
    return found


def cases(task: str) -> list[Case]:
    """The task's trace cases, built from its solution.py (module tasks take their weights from the user's module),
    and its stress inputs, every one of them (as if every check had failed)."""
    path = TASK_DIR / task / "solution.py"
    with user_context(path, task) as ctx:
        module = declared(task)
        found = module.case(ctx)
        found = found if isinstance(found, list) else [found]
        if hasattr(module, "stress"):
            found += module.stress(ctx, {d.id for d in TASKS[task].load().checks(ctx)})
    return found


def test_the_rule_tells_words_from_code():
    words = ("merged heads", "k chunk 1", "log-sum-exp, chunk 3", "row max", "distance", "x (new)", "ln2(stream)", "sum of exp")
    code = ("q", "scores", "weights·v", "x Wᵀ", "B·A", "dQ", "log-sum-exp", "c_kv = W_dkv x", "dS·scale", "ln1(x)", "up (w3 x)")
    assert [name for name in words if not needs_zh(name)] == []
    assert [name for name in code if needs_zh(name)] == []


def test_a_forgotten_or_stale_name_is_reported():
    x = torch.zeros(2)
    steps = [("q", x), ("merged heads", x), ("k chunk 1", x)]
    assert problems(Case(None, (), steps, zh={"merged heads": "合并各头", "k chunk 1": "第 1 块的 k"})) == []
    assert problems(Case(None, (), steps, zh={"merged heads": "合并各头"})) == ["no zh for 'k chunk 1'"]
    stale = {"merged heads": "合并各头", "k chunk 1": "第 1 块的 k", "k chunk 2": "第 2 块的 k"}
    assert problems(Case(None, (), steps, zh=stale)) == ["zh for 'k chunk 2', which is no step"]
    english = {"merged heads": "merged heads", "k chunk 1": "第 1 块的 k"}
    assert problems(Case(None, (), steps, zh=english)) == ["zh for 'merged heads' is not Chinese: 'merged heads'"]


@pytest.mark.parametrize("task", DECLARED)
def test_every_word_step_has_a_chinese_name(task):
    built = cases(task)
    assert built
    for case in built:
        assert problems(case) == [], task
