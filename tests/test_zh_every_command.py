"""Every command of drill in Chinese (issue 28): each leaf of the command tree runs with ``--lang zh`` on a history
that has something in it, and what it prints holds no English word outside code, ids, paths, units and proper nouns.
The cases are keyed by the command's path, and a command added to the tree without one fails the first test. The
interactive screens run in a real terminal too: tests/test_zh_screens.py drives the whiteboard through pexpect."""

from __future__ import annotations

import functools
import io
import keyword
import re
import tokenize
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drill.cli import app
from drill.views.trace_view import CODE_WIDTH, SHAPE_WIDTH

from whiteboard.zh_text import STEP_NAMES, english_words

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "drill" / "grade" / "tasks"
FIXTURE = str(ROOT / "tests" / "fixtures" / "quiz_bank.yaml")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROPER = {"Anki", "Colab", "Jupyter", "FSRS", "Python", "SQLite", "Triton", "CUDA", "CPU", "GPU", "JSON", "YAML", "Markdown",
          "Enter", "Esc", "Ctrl", "Tab", "PyTorch", "LLM", "Transformer", "GPT", "BERT", "LLaMA", "Llama", "Mistral", "Qwen",
          "DeepSeek", "FlashAttention", "vLLM", "RLHF", "PPO", "DPO", "GRPO", "LoRA", "MoE", "KV", "RoPE", "ALiBi", "MLA",
          "GQA", "MHA", "MQA", "BPE", "AUC", "CLIP", "SFT", "AdamW", "Adam", "SwiGLU", "GELU", "ReLU", "RMSNorm", "LayerNorm",
          "BatchNorm", "HCCL", "AllReduce", "ReduceScatter", "AllGather", "ring", "Ring", "top", "TopK", "jupyter", "lab",
          "MiB", "GiB", "KiB", "TFLOPS", "GB", "Landlock", "PagedAttention", "Dropout", "Inverted", "Softmax", "Tanh", "ReLU",
          "cpu", "cuda", "pass"}  # fmt: skip - "pass": selftest's expected outcome of a solution, a code like the others


@functools.cache
def shown_as_is() -> set[str]:
    """Ids shown as they are: topics, tasks, tracks, question types and fields, config keys, question ids."""
    from drill import cli, config
    from drill.bank.load import load_bank
    from drill.bank.schema import QUESTION_FIELDS, TYPES
    from drill.completion import bundled_topics
    from drill.whiteboard.catalog import TRACKS

    words = set(" ".join(TRACKS).split()) | set(bundled_topics()) | set(config.KEYS) | set(TYPES) | set(cli.TASK_NAMES.split(", "))
    return words | set(QUESTION_FIELDS) | set(load_bank(None).questions) | set(load_bank([Path(FIXTURE)]).questions)


PROSE = {"all", "any", "before", "end", "error", "get", "keep", "last", "new", "order", "other", "right", "start", "state",
         "step", "steps", "total", "valid", "value", "values", "visible", "inside", "group", "groups", "safe", "sample",
         "score", "text", "full", "half", "key", "keys", "list", "load", "store", "range", "round", "sort", "sorted", "split",
         "where", "size", "index", "previous", "progress", "remove", "reverse", "reversed", "finished", "future", "closest",
         "nearest", "stable", "correction", "distance", "equal", "member", "objective", "schedule", "training", "window",
         "image", "prompt", "device", "language", "expected", "output", "result", "shape", "empty", "ones", "out", "seq",
         "self", "super", "send", "token", "expert", "experts", "layer", "forward", "init", "item", "long", "double", "float",
         "int", "bool", "tuple", "zip", "len", "sum", "max", "min", "mean", "log"}  # fmt: skip


@functools.cache
def code_names() -> frozenset[str]:
    """The names the bundled solutions and templates use (scores, mask, keepdim, merges): code named in Chinese prose,
    as in 第 1 步 rank 最小的 pair or 没有用到 mask 参数, and the trace's steps (✓ scaled). Python's keywords, and
    names that are everyday English words too, stay out: in a Chinese screen those would be a leak."""
    names = set()
    for path in [*TASKS.glob("*/solution*.py"), *TASKS.glob("*/template.py")]:
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        names |= {t.string for t in tokens if t.type == tokenize.NAME and not keyword.iskeyword(t.string)}
    return frozenset((names | STEP_NAMES) - PROSE)


@functools.cache
def code_lines() -> tuple[str, ...]:
    """The lines of every bundled solution and second style (``drill whiteboard --solution`` prints them)."""
    return tuple({line.strip() for path in TASKS.glob("*/*.py") for line in path.read_text().splitlines() if line.strip()})


def is_code(line: str) -> bool:
    """A line of a bundled solution, whole or wrapped at the screen's edge, in a table cell or on its own."""
    cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()] or [line.strip()]
    return bool(line.strip()) and all(any(cell in code for code in code_lines()) for cell in cells)


TRACE_ROW = re.compile(r"^ {0,3}\d{1,4}  .{%d}  .{%d} " % (CODE_WIDTH, SHAPE_WIDTH))  # --trace: line, the user's code, its value


def english_left(output: str, home: Path) -> list[str]:
    text = ANSI.sub("", output).replace(str(home), " ").replace(str(ROOT), " ")
    text = "\n".join(line for line in text.splitlines() if not is_code(line))  # the solutions' code, shown as written
    text = "\n".join(TRACE_ROW.sub("", line) for line in text.splitlines())  # a trace row's code and value, as written
    text = re.sub(r"drill(?: [a-z][\w-]*)*|--[\w-]+|[\w./-]*[/.][\w./-]+|\w+(?:[-_]\w+)+|'[^']*'", " ", text)
    allowed = PROPER | shown_as_is() | code_names()
    return sorted({w for w in english_words(text) if w not in allowed and not re.fullmatch(r"[A-Z]{2,}s?", w)})  # acronyms: GAE, ROC


def cases(home: Path) -> dict[str, list[list[str]]]:
    mutant = str(TASKS / "sdpa" / "mutants" / "scale-missing__1.py")
    broken = home / "broken.yaml"
    broken.write_text("format_version: 1\nquestions:\n  - id: x\n    level: L9\n    type: choice\n    choices: [{en: a, zh: b}]\n")
    return {
        "today": [[]],
        "quiz": [["quiz", "--bank", FIXTURE, "--topic", "fx-quiz", "--type", "choice", "--count", "1"]],
        "review": [["review"]],
        "mock": [["mock", "--bank", FIXTURE, "--topic", "fx-quiz", "--minutes", "1"]],
        "mistakes": [["mistakes"]],
        "grade": [["grade", mutant, "--task", "sdpa"], ["grade", str(TASKS / "softmax" / "solution.py")],
                  # --trace: a line-by-line trace and leak pictures, a finding on a stress input, a value trace
                  ["grade", str(TASKS / "sdpa" / "mutants" / "mask-ignored__1.py"), "--task", "sdpa", "--trace"],
                  ["grade", str(TASKS / "softmax" / "mutants" / "softmax-no-max-shift__1.py"), "--task", "softmax", "--trace"],
                  ["grade", str(TASKS / "bpe" / "mutants" / "bpe-encode-not-by-rank__1.py"), "--task", "bpe", "--trace"]],
        "whiteboard": [["whiteboard", "softmax", "--solution", "--file", str(home / "wb.py")]],  # a pexpect session: test_zh_screens
        "tasks": [["tasks"]],
        "notebook": [["notebook", "sdpa", "--output", str(home / "n.ipynb")]],
        "selftest": [["selftest", "--task", "softmax"]],
        "streak": [["streak"]],
        "stats": [["stats"]],
        "doctor": [["doctor"]],
        "bank list": [["bank", "list", "--topic", "fx-quiz", "--bank", FIXTURE]],
        "bank show": [["bank", "show", "fx-choice", "--bank", FIXTURE]],
        "bank validate": [["bank", "validate", FIXTURE], ["bank", "validate", str(broken)]],
        "bank stats": [["bank", "stats"]],
        "history export": [["history", "export", str(home / "h.json")]],
        "history import": [["history", "import", str(home / "h.json")]],
        "export anki": [["export", "anki", str(home / "a.apkg"), "--topic", "agents"]],
        "export markdown": [["export", "markdown", str(home / "m.md"), "--topic", "agents"]],
        "config set": [["config", "set", "daily-goal", "3"]],
        "config get": [["config", "get", "fsrs-parameters"]],
        "config list": [["config", "list"]],
    }


def leaves() -> set[str]:
    import typer.main

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if not subs:
            return {" ".join(path)}
        return set().union(*(walk(sub, [*path, name]) for name, sub in subs.items()))

    return walk(typer.main.get_command(app), [])


def test_every_command_has_a_case(tmp_path):
    assert set(cases(tmp_path)) == leaves()


@pytest.mark.usefixtures("warm_judge")
def test_every_command_reads_chinese(drill_home, monkeypatch):
    pytest.importorskip("torch")
    from drill.views import console

    monkeypatch.setattr(console.out, "_width", 300)  # a table cell wrapped mid-word would read as English fragments
    runner, left = CliRunner(), {}
    for name, runs in cases(drill_home).items():
        for args in runs:
            result = runner.invoke(app, [*args, "--lang", "zh"], input="y\n" + "1\n" * 8)
            assert result.exit_code in (0, 1, 2) and result.exception is None or isinstance(result.exception, SystemExit), (args, result.output)
            words = english_left(result.output, drill_home)
            if words:
                left[" ".join(args)] = (words, result.output[-1500:])
    assert left == {}, "\n\n".join(f"{k}: {w}\n{out}" for k, (w, out) in left.items())


def test_the_check_finds_english_but_not_code_ids_or_paths(tmp_path):
    assert english_left("已写入 /tmp/x.json：3 questions", tmp_path) == ["questions"]
    assert english_left("    shifted = x - x.amax(dim=dim, keepdim=True)", tmp_path) == []  # softmax's solution, shown as written
    assert english_left("题目 'fx-choice'：level：取值无效 · drill quiz --topic agents · GAE · Softmax", tmp_path) == []
