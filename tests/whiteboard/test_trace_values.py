"""drill grade --trace for the tasks that compute in plain Python (bpe, lr_schedule, beam_search): the value
recorder (drill.grade.user.value_trace) and the analysis (drill.grade.trace_values).

Correct files, the bundled ones and hand-written ones in other styles, trace clean; every mutant of the three
tasks, and bugs put into the hand-written ones, is named at the line of its bug with the step it should have
made; a hostile value is bounded or refused without crashing the judge; only the user's own frames are read.
The traces run on the real user side (a forked process), as in a grade.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch
from traced import trace, zh
from whiteboard_impls import correct_files
from typer.testing import CliRunner
from zh_text import english_words

from drill.cli import app
from drill.grade import remote
from drill.grade.user import value_trace, wire
from drill.grade.user.value_trace import ValueRecorder

ROOT = Path(__file__).parents[2]
TASK_DIR = ROOT / "drill" / "grade" / "tasks"
HERE = ("bpe", "lr_schedule", "beam_search")

# Correct files in other styles than the bundled ones: minbpe's helpers and a dict of merges; one
# assignment per branch; a beam of (score, tokens) from a sorted list of every candidate.
BPE_MINBPE = """def get_stats(ids):
    counts = {}
    for a, b in zip(ids, ids[1:]):
        counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def merge(ids, pair, idx):
    new_ids = []
    i = 0
    while i < len(ids):
        if ids[i : i + 2] == list(pair):
            new_ids.append(idx)
            i += 2
        else:
            new_ids.append(ids[i])
            i += 1
    return new_ids


def train_bpe(text, n_merges):
    tokens = text.encode("utf-8")
    ids = list(tokens)
    merges = {}
    for k in range(n_merges):
        stats = get_stats(ids)
        if not stats:
            break
        pair = max(stats, key=stats.get)
        idx = 256 + k
        ids = merge(ids, pair, idx)
        merges[pair] = idx
    return list(merges)


def encode(text, merges):
    ranks = {tuple(p): i for i, p in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = get_stats(ids)
        pair = min(stats, key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = merge(ids, pair, 256 + ranks[pair])
    return ids
"""
LR_BRANCHES = """import math


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    if warmup_steps > 0 and step < warmup_steps:
        lr = max_lr * (step / warmup_steps)
    elif step >= total_steps:
        lr = min_lr
    else:
        t = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        lr = min_lr + (max_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * t))
    return lr
"""
BEAM_SORTED = """import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    beam = [(0.0, [bos_id])]
    completed = []
    for t in range(max_len):
        logp = step_fn(torch.tensor([s for _, s in beam]))
        cands = []
        for b, (score, seq) in enumerate(beam):
            for tok in range(logp.shape[1]):
                cands.append((score + logp[b, tok].item(), seq + [tok]))
        cands.sort(key=lambda c: -c[0])
        top = cands[:beam_size]
        beam = []
        for score, seq in top:
            if seq[-1] == eos_id:
                completed.append((score, seq))
            else:
                beam.append((score, seq))
        if not beam:
            break
    best = max(completed + beam, key=lambda c: c[0])
    return best[1][1:], best[0]
"""
WRITTEN = {"bpe": BPE_MINBPE, "lr_schedule": LR_BRANCHES, "beam_search": BEAM_SORTED}

# (task, mutant file, text that ends on the line of its bug, the step the trace expects there)
MUTANTS = [
    ("bpe", "bpe-code-points__1.py", "ids, merges = [ord(c) for c in text], []", "ids after 0 merges"),
    (
        "bpe",
        "bpe-overlapping-merge__1.py",
        "out.append(new)\n            i += 1",
        "ids after 1 merge",
    ),  # the index, not the append
    ("bpe", "bpe-encode-not-by-rank__1.py", "pair = max(counts, key=counts.get)", "lowest-rank pair, step 1"),
    ("bpe", "bpe-encode-not-by-rank__2.py", "pair = next(", "lowest-rank pair, step 1"),
    ("lr_schedule", "lr-cosine-period__1.py", "2 * math.pi * progress", "output"),
    ("lr_schedule", "lr-cosine-period__2.py", "progress = step / total_steps", "progress"),
    (
        "lr_schedule",
        "lr-no-floor__1.py",
        "progress = (step - warmup_steps)",
        "output",
    ),  # the line that runs instead of `return min_lr`
    ("lr_schedule", "lr-no-floor__2.py", "return 0.5 * max_lr", "output"),
    ("lr_schedule", "lr-warmup-off-by-one__1.py", "(step + 1) / (warmup_steps + 1)", "output"),
    ("beam_search", "beam-duplicate-hypotheses__1.py", "for _ in range(beam_size)]", "live beams, after step 0"),
    ("beam_search", "beam-finished-dropped__1.py", "seq, score = max(beams,", "best hypothesis: tokens with bos"),
    ("beam_search", "beam-finished-expanded__1.py", "survivors.append(hyp)", "live beams, after step 2"),
    ("beam_search", "beam-last-step-score__1.py", "totals = logp", "candidate totals, step 2"),
    ("beam_search", "beam-length-normalised__1.py", "seq, score = max(finished + beams,", "best hypothesis: tokens with bos"),
]
NOT_TRACEABLE = {"uses-builtin-lr-scheduler": "its values are right: the rules check names the builtin"}
# second written forms of a traced code whose line the trace cannot name: (file, why)
OTHER_FORMS = {
    "beam-finished-dropped__2.py": "no hypothesis of the trace's input ends on the last step: numerical.eos-at-max-len names it",
    "bpe-overlapping-merge__2.py": "`out[-1] = new` changes the list in place: the trace names the append that last wrote it",
}

# Bugs put into the hand-written files: (task, old text, new text), the new text's line is where the bug is.
WRITTEN_BUGS = [
    ("bpe", "            i += 2\n", "            i += 1  # BUG\n", "ids after 1 merge"),
    ("bpe", "pair = min(stats, key=lambda p: ranks.get(p, float(\"inf\")))",
     "pair = max((p for p in stats if p in ranks), key=stats.get)  # BUG", "lowest-rank pair, step 1"),
    ("lr_schedule", "math.cos(math.pi * t))", "math.cos(2 * math.pi * t))  # BUG", "output"),
    ("lr_schedule", "max_lr * (step / warmup_steps)", "max_lr * ((step + 1) / warmup_steps)  # BUG", "output"),
    ("beam_search", "cands.append((score + logp[b, tok].item(),", "cands.append((logp[b, tok].item(),  # BUG\n                 ", None),
]  # fmt: skip


def written(tmp_path: Path, task: str, source: str, name: str = "ok") -> Path:
    path = tmp_path / f"{task}_{name}.py"
    path.write_text(source)
    return path


UNALIGNED = {"beam_search_fixed_width"}  # its fixed-width beam flattens candidate indices over more rows (test_trace.py)
CLEAN = [(t, p) for t in HERE for p in [TASK_DIR / t / "solution.py", *correct_files(t)] if p.stem not in UNALIGNED] + [
    (t, None) for t in HERE
]


@pytest.mark.parametrize("task, path", CLEAN, ids=[f"{t}-{p.stem if p else 'written'}" for t, p in CLEAN])
def test_a_correct_file_traces_clean(tmp_path, task, path):
    found = trace(path or written(tmp_path, task, WRITTEN[task]), task)
    assert found["first_divergence"] is None, found["first_divergence"]
    rows = found["trace"]
    assert {"line", "code", "op", "shape", "dtype", "match", "status"} <= set(rows[0])
    assert all(r["status"] in ("match", "feeds", "aux") for r in rows), rows
    assert any(r["op"] == "return" and r["match"] == "output" for r in rows)
    assert sum(r["status"] == "match" for r in rows) >= 3  # the steps, not the output alone


@pytest.mark.parametrize("task, name, text, expected", MUTANTS, ids=[m[1].removesuffix(".py") for m in MUTANTS])
def test_a_mutant_is_named_at_the_line_of_its_bug(task, name, text, expected):
    path = TASK_DIR / task / "mutants" / name
    source = path.read_text()
    assert source.count(text) == 1, (name, text)
    lines = [source[: source.index(text) + len(text)].count("\n") + 1]
    found = trace(path, task)
    divergence = found["first_divergence"]
    assert divergence is not None and divergence["line"] == lines[0], divergence
    assert divergence["expected"] == expected, divergence
    assert divergence["code"] == path.read_text().splitlines()[lines[0] - 1].strip()[:120]
    assert english_words(zh(divergence["message"])) == [], zh(divergence["message"])
    assert [r["line"] for r in found["trace"] if r["status"] == "diverges"] == [lines[0]]


def test_every_mutant_of_the_three_tasks_is_traced_or_explained():
    codes = {p.name.split("__")[0] for task in HERE for p in (TASK_DIR / task / "mutants").glob("*.py")}
    files = {p.name for task in HERE for p in (TASK_DIR / task / "mutants").glob("*.py")}
    assert codes <= {m[1].split("__")[0] for m in MUTANTS} | set(NOT_TRACEABLE)
    assert files - {m[1] for m in MUTANTS} == {f"{code}__1.py" for code in NOT_TRACEABLE} | set(OTHER_FORMS)


@pytest.mark.parametrize("task, old, new, expected", WRITTEN_BUGS, ids=[f"{b[0]}-{i}" for i, b in enumerate(WRITTEN_BUGS)])
def test_a_bug_in_another_style_is_named_at_its_line(tmp_path, task, old, new, expected):
    assert WRITTEN[task].count(old) == 1
    path = written(tmp_path, task, WRITTEN[task].replace(old, new), "broken")
    line = next(n for n, code in enumerate(path.read_text().splitlines(), 1) if "# BUG" in code)
    divergence = trace(path, task)["first_divergence"]
    assert divergence is not None and divergence["line"] == line, divergence
    assert expected is None or divergence["expected"] == expected, divergence


def test_an_exception_is_named_where_it_is_raised(tmp_path):
    path = written(tmp_path, "lr_schedule", LR_BRANCHES.replace("        lr = min_lr\n", "        lr = min_lr / 0\n"), "raises")
    divergence = trace(path, "lr_schedule")["first_divergence"]
    assert divergence["line"] == 8 and "ZeroDivisionError" in divergence["message"], divergence


# --- hostile values and the recorder's bounds -----------------------------------------------------


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOSTILE = '''CALLED = []


class Evil:
    """Every hook records that the recorder called it."""

    def __eq__(self, other):
        CALLED.append("eq")
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        CALLED.append("repr")
        return "evil"

    def __len__(self):
        CALLED.append("len")
        return 1

    def __iter__(self):
        CALLED.append("iter")
        return iter([])

    @property
    def __class__(self):
        CALLED.append("class")
        return list


class Sneaky(list):
    def __iter__(self):
        CALLED.append("list iter")
        return iter([])

    def __len__(self):
        CALLED.append("list len")
        return 0


def run():
    big = list(range(1_000_000))
    evil = Evil()
    loop = []
    loop.append(loop)
    sneaky = Sneaky([1, 2, 3])
    huge = 10**400
    fine = [1.5, (2, "a"), {"k": b"xy"}]
    return len(big)
'''


def test_the_recorder_copies_plain_data_only_and_calls_nothing_of_the_users(tmp_path):
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE)
    module = load(path)
    with ValueRecorder(str(path.resolve())) as recorder:
        assert module.run() == 1_000_000
    assert module.CALLED == []
    got = {r["name"]: r for r in recorder.records}
    assert {n: got[n]["omitted"] for n in ("big", "evil", "loop", "huge")} == {"big": "too long", "evil": "Evil", "loop": "nested too deeply",
                                                                               "huge": "int"}  # fmt: skip
    assert all(got[n]["value"] is None for n in ("big", "evil", "loop", "huge"))
    assert got["sneaky"]["value"] == [1, 2, 3]  # list's own iteration, not the subclass's
    assert got["fine"]["value"] == [1.5, (2, "a"), {"items": [["k", {"bytes": [120, 121]}]]}]
    assert got["return"]["value"] == 1_000_000
    # what the recorder sends, the judge accepts
    header, buffers = wire.encode((None, recorder.records, None))
    tensors = wire.tensors_of(header, b"".join(buffers))
    records = wire.build(header["value"], tensors)[1]
    assert all(remote.plain_value(r["value"], [0]) for r in records)


def test_the_recorder_stops_at_its_bounds_and_the_call_goes_on(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text("import torch\n\n\ndef run(n):\n    total = 0.0\n    for i in range(n):\n        total += i\n"
                    "        t = torch.ones(4096)\n    return total\n")  # fmt: skip
    module = load(path)
    with ValueRecorder(str(path.resolve())) as recorder:
        assert module.run(50_000) == sum(range(50_000))
    assert recorder.full and len(recorder.records) <= value_trace.MAX_RECORDS
    assert recorder.elements <= value_trace.MAX_ELEMENTS
    assert sys.gettrace() is None or sys.gettrace() is not recorder.start


def test_the_recorder_reads_only_frames_of_the_users_file(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text("def double(xs):\n    out = [2 * x for x in xs]\n    return out\n")
    path = tmp_path / "user.py"
    path.write_text("def inner(xs, double):\n    ys = double(xs)\n    return sorted(ys, key=lambda v: -v)\n\n\n"
                    "def run(xs, double):\n    zs = [x + 1 for x in xs]\n    return inner(zs, double)\n")  # fmt: skip
    module, other = load(path), load(helper)
    with ValueRecorder(str(path.resolve())) as recorder:
        assert module.run([1, 2], other.double) == [6, 4]
    assert {r["fn"] for r in recorder.records} == {"run", "inner"}
    assert all(1 <= r["line"] <= 8 for r in recorder.records)
    assert "out" not in {r["name"] for r in recorder.records}
    assert [(r["fn"], r["name"], r["value"]) for r in recorder.records] == [
        ("run", "zs", [2, 3]), ("inner", "ys", [4, 6]), ("inner", "return", [6, 4]), ("run", "return", [6, 4])]  # fmt: skip


def test_a_hostile_file_traces_without_crashing_the_judge(tmp_path):
    source = LR_BRANCHES.replace("    return lr\n", "    junk = [list(range(100_000)), object()]\n    loop = []\n    loop.append(loop)\n"
                                 "    return lr\n")  # fmt: skip
    found = trace(written(tmp_path, "lr_schedule", source, "hostile"), "lr_schedule")
    assert found["first_divergence"] is None, found["first_divergence"]
    assert {r["op"]: r["dtype"] for r in found["trace"] if r["op"] in ("junk", "loop")} == {"junk": "omitted", "loop": "omitted"}


FORGE = """import sys


def cosine_with_warmup(step, warmup_steps, total_steps, max_lr, min_lr=0.0):
    recorder = getattr(sys.gettrace(), "__self__", None)
    if recorder is not None:
        recorder.records.append({FORGED})
    return max_lr
"""


@pytest.mark.parametrize("forged", ['{"line": 1, "name": "x", "call": 0, "fn": "f", "value": object(), "omitted": None}',
                                    '{"line": "1", "name": "x", "call": 0, "fn": "f", "value": 1, "omitted": None}',
                                    '{"line": 1, "name": "x", "call": 0, "fn": "f", "value": {"$t": 0}, "omitted": None}',
                                    '{"line": 1, "name": "x", "call": 0, "fn": "f", "value": 2, "omitted": "int"}',
                                    '{"line": 1, "name": "x", "call": 0, "fn": "f", "value": {"items": [[1]]}, "omitted": None}'],
                         ids=["handle", "line-str", "tag", "omitted-with-value", "bad-items"])  # fmt: skip
def test_a_forged_value_trace_reply_is_refused(tmp_path, forged):
    path = written(tmp_path, "lr_schedule", FORGE.replace("{FORGED}", forged), "forged")
    user = remote.UserProcess(remote.zygote(), timeout=30, device=torch.device("cpu"), memory=None)
    try:
        user.load(str(path))
        with pytest.raises(remote.Abort) as caught:
            user.value_trace(user.entry("cosine_with_warmup"), (3, 10, 100, 1e-3, 1e-4))
        assert caught.value.check.id == "isolation.protocol"
    finally:
        user.close()


def test_plain_value_accepts_what_the_recorder_sends_and_nothing_else():
    good = [1, 2.5, "s", None, True, (1, [2]), torch.ones(3), {"items": [[(1, 2), 3]]}, {"bytes": [0, 255]}]
    assert all(remote.plain_value(v, [0]) for v in good)
    deep: list = []
    for _ in range(20):
        deep = [deep]
    bad = [wire.Handle(3), {"k": 1}, {"items": [[1, 2, 3]]}, {"bytes": [256]}, {"items": [], "bytes": []}, deep, [0] * 600_000,
           torch.ones(600_000)]  # fmt: skip
    assert not any(remote.plain_value(v, [0]) for v in bad)


# --- the CLI ----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("warm_judge")
def test_grade_trace_names_the_line_in_json_and_in_chinese(monkeypatch, tmp_path):
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))
    path = TASK_DIR / "bpe" / "mutants" / "bpe-overlapping-merge__1.py"
    line = next(n for n, code in enumerate(path.read_text().splitlines(), 1) if "i += 1" in code)  # the first: after a merge
    result = CliRunner().invoke(app, ["grade", str(path), "--task", "bpe", "--trace", "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["first_divergence"]["line"] == line and report["first_divergence"]["expected"] == "ids after 1 merge"
    assert any(r["op"] == "ids" and r["match"] == "ids after 0 merges" for r in report["trace"])
    shown = CliRunner().invoke(app, ["grade", str(path), "--task", "bpe", "--trace", "--lang", "zh"])
    assert f"第 {line} 行：" in shown.output and "1 次合并后的 ids" in shown.output, shown.output
