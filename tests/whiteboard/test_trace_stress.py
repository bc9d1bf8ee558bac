"""drill grade --trace's stress inputs: bugs the small trace input hides (an exp that overflows only on large
scores, eps outside the square root, a cache wrong only on a third call...) are named at their line once a grade's
failed checks call for the input that shows them; a correct file never diverges on any of them. And cross's leak
picture: per sample, which context keys reach each query.

Each broken file is graded for real (drill.grade.battery), so the stress inputs are the ones its own failed checks pick.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from traced import user_context, zh
from whiteboard_impls import correct_files
from zh_text import english_words

from drill.grade.battery import run_battery
from drill.grade.report import Report
from drill.grade.tasks import TASKS
from drill.grade.tracing import declared, run_trace, trace_cases
from drill.text.messages import Msg
from drill.views import grade_view

TASK_DIR = Path(__file__).parents[2] / "drill" / "grade" / "tasks"
CJK = re.compile(r"[\u4e00-\u9fff]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# a hand-written softmax, stable on the small input, where a task ships no such mutant
HAND_SOFTMAX = {
    "mha": "out = torch.softmax(scores, dim=-1) @ v",
    "causal": "y = torch.softmax(att, dim=-1) @ v",
    "cross": "out = torch.softmax(scores, dim=-1) @ v",
}
FLASH_NO_MAX = """import math

import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    rows = torch.arange(q.size(-2))[:, None] + (k.size(-2) - q.size(-2))
    total = q.new_zeros(q.shape[:-1] + (1,))
    acc = q.new_zeros(q.shape[:-1] + (v.size(-1),))
    for start in range(0, k.size(-2), block_size):
        kb, vb = k[..., start : start + block_size, :], v[..., start : start + block_size, :]
        scores = q @ kb.transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            scores = scores.masked_fill(torch.arange(start, start + kb.size(-2))[None, :] > rows, float("-inf"))
        p = torch.exp(scores)  # no running max
        total = total + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ vb
    return acc / total
"""

# (task, a mutant in the task's mutants/ or "hand-written", the text of the line the trace must name)
REACHED = [
    ("sdpa", "unstable-softmax__1.py", "e = torch.exp(x)"),
    ("mha", "hand-written", "out = (scores.exp() /"),
    ("causal", "hand-written", "y = (att.exp() /"),
    ("cross", "hand-written", "out = (scores.exp() /"),
    ("flash", "hand-written", "p = torch.exp(scores)"),
    ("softmax", "softmax-no-max-shift__1.py", "e = x.exp()"),
    ("softmax", "softmax-global-max__1.py", "e = (x - x.max()).exp()"),
    ("softmax", "softmax-ignores-dim__1.py", "e = torch.exp(x - x.amax(dim=-1"),
    ("moe", "unstable-softmax__moe.py", "weights = top_logits.exp()"),
    ("cross_entropy", "ce-unstable-logsumexp__1.py", "logp = torch.log(torch.softmax("),
    ("cross_entropy", "ce-unstable-logsumexp__2.py", "logp = logits - logits.exp()"),
    ("dpo_loss", "dpo-unstable-logsigmoid__1.py", "loss = -torch.log(torch.sigmoid("),
    ("dpo_loss", "dpo-unstable-logsigmoid__2.py", "loss = torch.log1p(torch.exp(-z))"),
    ("flash_decoding", "flash-decoding-merge-unshifted__1.py", "num = num + torch.exp(lse) * o"),
    # the cache keeps only the last chunk: its keys still match as a block of the full cache, so the first wrong
    # value is the softmax over 7 of the 11 keys (the line that drops the rest, new = (k, v), runs no torch op)
    ("kv_cache", "kv-cache-not-appended__1.py", "y = torch.softmax(att, dim=-1) @ v"),
    ("kv_cache", "kv-cache-stale-state__1.py", "k, v = torch.cat([self.k_cache, k]"),
    ("layernorm", "layernorm-eps-outside-sqrt__1.py", "std = (x - mean).pow(2)"),
    ("layernorm", "layernorm-one-pass-variance__1.py", "var = (x * x).mean("),
    ("rmsnorm", "rmsnorm-eps-outside-sqrt__1.py", "rms = h.pow(2)"),
    ("quantize", "quant-no-clamp__1.py", "q = torch.round(w / safe).to(torch.int8)"),
]
STRESSED = sorted({task for task, *_ in REACHED})


def source(task: str, mutant: str) -> str:
    if mutant != "hand-written":
        return (TASK_DIR / task / "mutants" / mutant).read_text()
    if task == "flash":
        return FLASH_NO_MAX
    line = HAND_SOFTMAX[task]
    var = line.split("softmax(")[1].split(",")[0]
    solution = (TASK_DIR / task / "solution.py").read_text()
    assert line in solution
    by_hand = f"({var}.exp() / {var}.exp().sum(dim=-1, keepdim=True))"
    return solution.replace(line, line.replace(f"torch.softmax({var}, dim=-1)", by_hand))


def fixtures(task: str) -> list[Path]:
    """The task's solution and its correct fixtures (not those of a task whose name extends it: flash_decoding_*)."""
    return [TASK_DIR / task / "solution.py", *correct_files(task)]


@pytest.mark.parametrize("task, mutant, text", REACHED, ids=[f"{t}-{m.removesuffix('.py')}" for t, m, _ in REACHED])
def test_a_bug_the_small_input_hides_is_named_on_the_stress_input(task, mutant, text, tmp_path):
    path = tmp_path / f"{task}_{mutant.removesuffix('.py').replace('-', '_')}.py"
    path.write_text(source(task, mutant))
    lines = [n for n, code in enumerate(path.read_text().splitlines(), 1) if text in code]
    assert len(lines) == 1, text
    report = run_battery(path, task=task, device="cpu")
    assert not report.passed
    found = report.first_divergence
    assert found is not None and found["line"] == lines[0], found
    assert found["input"] and CJK.search(zh(found["input"])), found
    assert found["message"].startswith(f"on {found['input']}: ") and zh(found["message"]).startswith(zh(found["input"]))
    assert english_words(zh(found["message"])) == [], zh(found["message"])
    with user_context(path, task, timeout=60) as ctx:  # the small input alone shows nothing: the stress input named the line
        assert run_trace(task, ctx, rows=False)["first_divergence"] is None


CLEAN = [(task, path) for task in STRESSED for path in fixtures(task)]


@pytest.mark.parametrize("task, path", CLEAN, ids=[f"{t}-{p.parent.name}-{p.stem}" for t, p in CLEAN])
def test_a_correct_file_traces_clean_on_every_stress_input(task, path):
    with user_context(path, task, timeout=60) as ctx:
        every = {d.id for d in TASKS[task].load().checks(ctx)}
        assert run_trace(task, ctx, rows=False)["first_divergence"] is None
        assert run_trace(task, ctx, rows=False, failed=frozenset(every))["first_divergence"] is None
        lines = path.read_text().splitlines()
        cases = declared(task).stress(ctx, every)
        assert cases and all(case.label for case in cases)
        for case in cases:  # each on its own: run_trace stops at the first that diverges
            found = trace_cases(ctx, [case], lines)
            assert found["trace"] and found["first_divergence"] is None, (case.label, found["first_divergence"])


def test_a_correct_file_with_no_failed_check_pays_for_no_stress_input():
    with user_context(TASK_DIR / "kv_cache" / "solution.py", "kv_cache") as ctx:
        assert [declared(task).stress(ctx, set()) for task in STRESSED] == [[] for _ in STRESSED]


@pytest.fixture(scope="module")
def cross_leak() -> dict:
    report = run_battery(TASK_DIR / "cross" / "mutants" / "mask-ignored__cross.py", task="cross", device="cpu")
    assert any(c.id == "mask-leak.padding" and c.status == "fail" for c in report.checks)
    return report.to_wire()


def render(report: dict, monkeypatch, **console) -> list[str]:
    buffer = io.StringIO()
    monkeypatch.setattr(grade_view, "out", Console(file=buffer, width=80, highlight=False, **console))
    grade_view.print_report(Report.from_wire(report), as_json=False)
    return buffer.getvalue().splitlines()


def test_cross_draws_the_padding_of_each_sample(cross_leak):
    pictures = [p for p in cross_leak["pictures"] if p["kind"] == "leak"]
    assert [p["title"] for p in pictures] == [f"padding, sample {b} (context length {n})" for b, n in enumerate((7, 1, 4))]
    for picture, n in zip(pictures, (7, 1, 4)):
        allowed, through = picture["allowed"], picture["through"]
        assert len(allowed) == 5 and all(len(row) == 7 for row in allowed)  # queries from x (5), keys from the context (7)
        assert all(allowed[i][j] == (j < n) for i in range(5) for j in range(7))
        assert all(through[i][j] for i in range(5) for j in range(7))  # the mask is discarded: every key reaches every query
        assert CJK.search(zh(Msg.from_wire(picture["title_evidence"])))


def test_cross_draws_nothing_for_a_correct_file():
    with user_context(TASK_DIR / "cross" / "solution.py", "cross") as ctx:
        pictures = declared("cross").leaks(ctx, {"mask-leak.padding"})
    assert len(pictures) == 3
    assert all(picture["through"] == picture["allowed"] for picture in pictures)  # every real key used, no padded one


def test_cross_pictures_fit_80_columns_in_plain_and_colour(cross_leak, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    colour = render(cross_leak, monkeypatch, force_terminal=True, color_system="standard")
    plain = render(cross_leak, monkeypatch, force_terminal=False)
    assert all(len(line) <= 80 for line in plain) and all(len(ANSI.sub("", line)) <= 80 for line in colour)
    assert not any(ANSI.search(line) for line in plain)
    start = next(i for i, line in enumerate(plain) if line.startswith("padding, sample 1 (context length 1)"))
    assert "rows: queries, columns: keys" in plain[start]  # the title leaves room for the axes
    assert plain[start + 1].split() == [str(j) for j in range(7)]
    assert [plain[start + 2 + i].split() for i in range(5)] == [[f"q{i}", "●", *["✗"] * 6] for i in range(5)]
    drawn = [ANSI.sub("", line) for line in colour]
    assert drawn[start : start + 8] == plain[start : start + 8]
    assert "\x1b[1;31m" in colour[start + 2] or "\x1b[31m" in colour[start + 2]  # the leaking cells in red
