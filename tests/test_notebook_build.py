"""`drill notebook`: every generated notebook is valid nbformat (en and zh), holds the task's own template,
hints and title, is never written over; and the extension in a terminal IPython (no torch needed here:
a cell that does not parse is reported before any grader process starts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

nbformat = pytest.importorskip("nbformat")

from drill.notebook import build  # noqa: E402
from drill.notebook.build import contract  # noqa: E402
from drill.text.messages import translated  # noqa: E402
from test_zh_screens import english_fragments  # noqa: E402

TASKS = Path(__file__).resolve().parents[1] / "drill" / "grade" / "tasks"
TRACKS = ("attention", "positions", "inference", "building blocks", "training", "alignment", "decoding", "tokenization", "ml fundamentals", "systems", "kernels")


def drill(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drill", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """`drill notebook --plan` in English and in Chinese: {lang: folder}."""
    folders = {}
    for lang in ("en", "zh"):
        folder = tmp_path_factory.mktemp(lang)
        done = drill("notebook", "--plan", "-o", str(folder / "plan"), "--lang", lang, cwd=folder)
        assert done.returncode == 0, done.stderr
        folders[lang] = folder / "plan"
    return folders


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_plan_notebook_is_valid_and_holds_its_task(plans, lang):
    notebooks = sorted(plans[lang].glob("*.ipynb"))
    tasks = sorted(p.name for p in TASKS.glob("*/task.yaml"))
    assert len(notebooks) == len(tasks) + 1  # and the index
    for path in notebooks:
        nbformat.validate(nbformat.read(path, as_version=4))
    for path in notebooks[1:]:
        task = path.stem.split("-", 1)[1]
        meta = yaml.safe_load((TASKS / task / "task.yaml").read_text())
        cells = json.loads(path.read_text())["cells"]
        grade = next(c for c in cells if "".join(c["source"]).startswith(f"%%drill {task}"))
        assert "".join(grade["source"]).split("\n", 1)[1] == (TASKS / task / "template.py").read_text()
        markdown = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert meta["title"][lang] in markdown
        assert all(f"{h[lang]}\n\n</details>" in markdown for h in meta["hints"])  # collapsed
        assert ("--lang zh" in "".join(grade["source"])) == (lang == "zh")
        if lang == "zh":
            prose = markdown.replace(contract(TASKS / task / "template.py"), "")  # the code's own docstrings stay English
            names = {p for p in english_fragments(build.WORDS) if any(p in translated(m, "zh") for m in build.WORDS.values())}  # Colab, Shift+Enter
            assert not [p for p in english_fragments(build.WORDS) - names if p in prose]


def test_the_plan_goes_by_track_then_level(plans):
    order = [p.stem.split("-", 1)[1] for p in sorted(plans["en"].glob("*.ipynb"))[1:]]
    keys = [(TRACKS.index(m["track"]), m["level"]) for m in (yaml.safe_load((TASKS / t / "task.yaml").read_text()) for t in order)]
    assert keys == sorted(keys)
    index = "".join(json.loads(next(plans["en"].glob("0*-plan.ipynb")).read_text())["cells"][0]["source"])
    assert all(f"]({p.name})" in index for p in sorted(plans["en"].glob("*.ipynb"))[1:])


def test_an_existing_notebook_is_never_overwritten(tmp_path, plans):
    first = drill("notebook", "sdpa", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    path = tmp_path / "drill_sdpa.ipynb"
    path.write_text("my work")
    again = drill("notebook", "sdpa", "--lang", "zh", cwd=tmp_path)
    assert again.returncode == 2 and path.read_text() == "my work"
    assert len(again.stderr.strip().splitlines()) == 1 and "Traceback" not in again.stderr
    mine = plans["zh"] / "01-sdpa.ipynb"
    mine.write_text("my plan work")
    assert drill("notebook", "--plan", "-o", str(plans["zh"]), cwd=tmp_path).returncode == 0
    assert mine.read_text() == "my plan work"


@pytest.mark.parametrize("args", [[], ["sdpx"], ["sdpa", "--plan"], ["sdpa", "--lang", "fr"]], ids=" ".join)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args):
    done = drill("notebook", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


SCRIPT = """
%load_ext drill
import sys
from IPython.core.error import UsageError
ip = get_ipython()
print("SHELL", type(ip).__name__)
ip.run_cell_magic("drill", "grade sdpa", "def scaled_dot_product_attention(q, k, v, mask=None)\\n    return q\\n")
for line in ("grade sdpa", "hint sdpx", "", "hint"):
    try:
        ip.run_line_magic("drill", line)
    except UsageError as exc:
        print("USAGE", str(exc).splitlines()[0])
ip.run_line_magic("drill", "hint sdpa --lang zh")
ip.run_line_magic("drill", "solution sdpa")
print("HEAVY", [m for m in ("torch", "drill.grade.judge") if m in sys.modules])
"""


def test_a_terminal_ipython_gets_text(tmp_path):
    pytest.importorskip("IPython")
    script = tmp_path / "practice.ipy"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(script)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env={"DRILL_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
                                                                     "LANG": "C.UTF-8", "TERM": "dumb"})  # fmt: skip
    lines = done.stdout.splitlines()
    assert "SHELL TerminalInteractiveShell" in lines, done.stdout + done.stderr
    assert "FAILED" in done.stdout and "<" not in done.stdout  # the CLI's text report, no HTML
    assert "SyntaxError" in done.stdout or "syntax" in done.stdout.lower()
    usage = [line for line in lines if line.startswith("USAGE")]
    assert len(usage) == 4 and "%%drill grade" in usage[0] and "sdpa" in usage[1]
    first_zh = yaml.safe_load((TASKS / "sdpa" / "task.yaml").read_text())["hints"][0]["zh"]
    assert first_zh in done.stdout
    assert "masked_fill" not in done.stdout  # no solution before a pass
    assert "HEAVY []" in lines


def test_the_report_html_escapes_what_the_code_controls():
    from drill.grade.report import Check, Report
    from drill.notebook.render import report_html

    report = Report("sdpa", "cpu", [Check("rules.builtin", "rules", "fail", "<script>alert(1)</script> printed")])
    page = report_html(report, "en")
    assert "<script>" not in page and "&lt;script&gt;" in page
