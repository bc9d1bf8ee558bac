"""The judge's evidence in Chinese, end to end through the isolated judge: each report's checks arrive in the parent as
message ids with values (``Ev``), render from the evidence catalog in natively written Chinese with no English word
left, and a few families read exactly as the house style writes them. The grader tests check every in-process report
the same way (zh_evidence.py); this one crosses the real pipe, with the hostile files too. DRILL_EVIDENCE_ALL=1 grades
every bundled file instead of the few (about a minute on 2 cores).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from drill.grade.isolation import Worker
from drill.grade.run import make_request
from drill.grade.selftest import cases
from drill.grade.tasks import TASKS
from drill.text.messages import Ev

from whiteboard_impls import HOSTILE, IMPLS, TASKS_DIR
from zh_evidence import english_evidence

NUM = r"[-+]?\d[\d.]*(?:e[-+]?\d+)?"
# fmt: off
FAMILIES = [  # (task, file, check id, the Chinese as the house style writes it: a regular expression over its numbers)
    ("sdpa", "sdpa/mutants/scale-missing__1.py", "numerical.seed0", rf"输出：最大误差 {NUM}，位于 \[[\d, ]+\]（允许 {NUM}）"),
    ("sdpa", "sdpa/mutants/scale-missing__1.py", "numerical.mask-forms", rf"不带掩码时的输出：最大误差 {NUM}，位于 \[[\d, ]+\]（允许 {NUM}）"),
    ("sdpa", "sdpa/mutants/mask-inverted__1.py", "mask-leak.future", r"加了因果掩码，未来的位置 \d+ 一变，位置 \d+ 也跟着变了"),
    ("softmax", "softmax/solution.py", "rules.builtins", r"没有调用 torch 自带的实现：`softmax`"),
    ("sdpa", "sdpa/mutants/uses-builtin__1.py", "rules.builtins", r"调用了 `F\.scaled_dot_product_attention`"),
]
# fmt: on


# fmt: off
FEW = [TASKS_DIR / name for name in (  # the files whose grades hold the most wordings the others lack
    "gqa/mutants/gqa-head-mapping__1.py", "grpo/mutants/grpo-advantages-batch-normalised__1.py", "lr_schedule/solution.py",
    "sdpa/mutants/mask-after-softmax__1.py", "softmax/mutants/softmax-wrong-sum-dim__1.py", "bpe/mutants/bpe-overlapping-merge__1.py",
    "adamw/mutants/adamw-l2-not-decoupled__1.py", "quantize/mutants/quant-per-tensor-scale__1.py",
    "padding/mutants/causal-blocks-self__padding.py", "paged_attention/mutants/paged-index-swapped__1.py",
    "speculative/mutants/spec-residual-wrong__2.py", "mha/mutants/dropout-in-eval__2.py", "cross_entropy/mutants/ce-wrong-class-dim__1.py",
    "linear_attention/mutants/linear-attention-causal-exclusive__1.py", "rmsnorm/mutants/rmsnorm-mean-centred__1.py",
    "alibi/mutants/alibi-absolute-distance__1.py", "attention_backward/mutants/attn-backward-mask-not-reapplied__1.py",
    "lora/solution.py", "flash_decoding/mutants/flash-decoding-merge-unnormalised__1.py", "moe/mutants/moe-aux-topk-fractions__1.py",
)] + [HOSTILE / "exception.py", HOSTILE / "syntax_error.py", HOSTILE / "import_reference.py"]
# fmt: on
LIMITS = {
    "infinite_loop": {"timeout": 2},
    "slow_correct": {"timeout": 2},
    "slow_backward": {"timeout": 3},
    "touch_memory": {"memory_limit": 512 << 20},
}


def every_file() -> list[Path]:
    return [c.path for c in cases()] + sorted(
        p for kind in ("correct", "broken", "pairs", "hostile") for p in (IMPLS / kind).glob("*.py")
    )


def task_of(path: Path) -> str | None:
    """The task folder a solution or mutant sits in, the task a correct file is named after, else None (detected)."""
    if path.is_relative_to(TASKS_DIR):
        return path.relative_to(TASKS_DIR).parts[0]
    named = [t for t in TASKS if path.stem.startswith(f"{t}_")] if path.parent.name == "correct" else []
    return max(named, key=len) if named else {"sleeper_module": "mha"}.get(path.stem)


@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("torch")
    with Worker(threads=1) as worker:
        yield worker


def test_the_judge_sends_every_check_as_an_id_that_reads_in_chinese(judge):
    left = []
    for path in every_file() if os.environ.get("DRILL_EVIDENCE_ALL") else FEW:
        options = dict(LIMITS.get(path.stem, {}))
        timeout = options.pop("timeout", 60)
        report = judge.grade(make_request(path, task=task_of(path), device="cpu", **options), timeout)
        assert report.checks and all(isinstance(c.message, Ev) for c in report.checks), path  # rebuilt from the wire
        left += [(path.name, *found) for found in english_evidence(report)]
    assert left == [], left[:10]


@pytest.mark.parametrize(("task", "file", "check", "chinese"), FAMILIES, ids=[f[2] for f in FAMILIES])
def test_a_family_reads_as_the_house_style_writes_it(judge, task, file, check, chinese):
    report = judge.grade(make_request(TASKS_DIR / file, task=task, device="cpu", seed=0), 60)
    found = next(c for c in report.checks if c.id == check)
    assert re.fullmatch(chinese, found.text("zh")), found.text("zh")
