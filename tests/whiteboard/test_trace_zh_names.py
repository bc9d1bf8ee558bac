"""Every reference step the trace can name has a Chinese name (the step's name is an ``Ev`` the evidence catalog
translates), for ``drill grade --trace --lang zh``; so have its stress inputs' labels and its scale factors' meanings.

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
from zh_text import STEP_NAMES

from drill.grade.tasks import TASKS
from drill.grade.trace_match import Case
from drill.grade.tracing import declared
from drill.text.messages import Ev, Msg, translated

TASK_DIR = Path(__file__).parents[2] / "drill" / "grade" / "tasks"
DECLARED = sorted(d.name for d in TASK_DIR.iterdir() if (d / "intermediates.py").exists())

SHORT_WORDS = {"of", "to", "in", "on", "by", "at", "an", "as", "or"}  # 2-letter words that are English, not code (dQ, ln, up)
WORD = re.compile(r"(?<!\w)[A-Za-z]{2,}(?!\w)")  # a whole word: c_kv, d_out, W_uk, ln1 are identifiers
CJK = re.compile(r"[\u4e00-\u9fff]")


def needs_zh(name: str) -> bool:
    return any(word not in STEP_NAMES and (len(word) > 2 or word in SHORT_WORDS) for word in WORD.findall(name))


def problems(case: Case) -> list[str]:
    """What is wrong with a case's Chinese: a word step, a label or a factor's meaning that is not a message the
    catalog renders in Chinese."""

    def chinese(text) -> bool:
        return isinstance(text, Msg) and bool(CJK.search(translated(text, "zh")))

    found = [f"no zh for {name!r}" for name, _ in case.intermediates if needs_zh(name) and not chinese(name)]
    found += [f"the label {case.label!r} has no Chinese" for label in [case.label] if label and not chinese(label)]
    found += [f"the factor {f:g}'s meaning {said!r} has no Chinese" for f, said in getattr(case, "factors", ()) if not chinese(said)]
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


def test_a_word_step_or_label_without_chinese_is_reported():
    x = torch.zeros(2)
    named = [("q", x), (Ev("merged heads"), x), (Ev("padding, sample {b} (length {n})", b=1, n=3), x)]
    assert problems(Case(None, (), named, label=Ev("scores around 1e3"))) == []
    assert problems(Case(None, (), [("q", x), ("merged heads", x)])) == ["no zh for 'merged heads'"]
    assert problems(Case(None, (), [(Ev("a step no catalog knows"), x)])) == ["no zh for 'a step no catalog knows'"]
    assert problems(Case(None, (), [], label=Ev("a label no catalog knows"))) == ["the label 'a label no catalog knows' has no Chinese"]


@pytest.mark.parametrize("task", DECLARED)
def test_every_word_step_has_a_chinese_name(task):
    built = cases(task)
    assert built
    for case in built:
        assert problems(case) == [], task
