"""The notebook front door on real Jupyter parts: a notebook made by `drill notebook sdpa`, executed by
nbclient on a real ipykernel (one kernel for the module), with a mutant cell, a hint cell and the
solution in place of the template; then `drill tasks --json` and `drill stats --json` read the history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("torch")

TASK_DIR = Path(__file__).resolve().parents[1] / "drill" / "grade" / "tasks" / "sdpa"
MUTANT = "scale-missing"
MARKER = "\nimport builtins\nbuiltins.DRILL_CELL_RAN_HERE = True\n"  # set only where the cell runs
KERNEL_CHECK = "import builtins, sys\nprint(json.dumps({'torch': 'torch' in sys.modules, 'cell_ran': hasattr(builtins, 'DRILL_CELL_RAN_HERE')}))"


def drill(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drill", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={"DRILL_HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})  # fmt: skip


def kernelspec(folder: Path) -> Path:
    """A python3 kernelspec on this interpreter, found before any other installed one (JUPYTER_PATH comes first)."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "drill test", "language": "python"}))
    return folder


def html(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def text(cell) -> str:
    return "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell.outputs)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The generated notebook, extended and executed once: (executed cells by name, DRILL_HOME)."""
    home, work = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("work")
    made = drill(home, "notebook", "sdpa", "-o", "sdpa.ipynb", cwd=work)
    assert made.returncode == 0, made.stderr
    nb = nbformat.read(work / "sdpa.ipynb", as_version=4)
    by_id = {c.get("id"): c for c in nb.cells}
    grade = by_id["sdpa-grade"]
    magic, template = grade.source.split("\n", 1)
    assert template == (TASK_DIR / "template.py").read_text()
    mutant = (TASK_DIR / "mutants" / f"{MUTANT}__1.py").read_text()
    new = nbformat.v4.new_code_cell
    cells = {
        "setup": by_id["sdpa-setup"],
        "solution_locked": new(by_id["sdpa-solution"].source),
        "mutant": new(f"{magic}\n{mutant}{MARKER}"),
        "hint": by_id["sdpa-hint"],
        "kernel": new("import json\n" + KERNEL_CHECK),
        "solution_cell": grade,
        "solution_shown": by_id["sdpa-solution"],
        "hint_zh": new("%drill hint sdpa --lang zh"),
        "tasks": new("%drill tasks --lang zh"),
        "today": new("%drill today"),
    }
    grade.source = f"{magic}\n" + (TASK_DIR / "solution.py").read_text()
    nb.cells = list(cells.values())
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DRILL_HOME", str(home))
        env.setenv("JUPYTER_PATH", str(kernelspec(tmp_path_factory.mktemp("jupyter"))))
        env.setenv("LANG", "en_US.UTF-8")
        nbclient.NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    return cells, home


def test_a_mutant_cell_fails_with_its_code_in_the_html(run):
    cells, _ = run
    report = html(cells["mutant"])
    assert "FAILED" in report and MUTANT in report
    assert "PASSED" not in report


def test_the_cell_runs_on_the_user_side_never_in_the_kernel(run):
    cells, _ = run
    seen = json.loads(text(cells["kernel"]).strip().splitlines()[-1])
    assert seen == {"torch": False, "cell_ran": False}


def test_the_hint_after_a_diagnosis_is_the_one_about_it(run):
    cells, _ = run
    hints = yaml.safe_load((TASK_DIR / "task.yaml").read_text())["hints"]
    about = next(h for h in hints if MUTANT in h.get("codes", []))
    assert about["en"] in html(cells["hint"])
    others = [h["zh"] for h in hints if h is not about]
    assert any(zh in html(cells["hint_zh"]) for zh in others)  # the next unseen one, in Chinese


def test_the_solution_cell_passes_and_the_solution_opens_only_after(run):
    cells, _ = run
    assert "PASSED" in html(cells["solution_cell"]) and "FAILED" not in html(cells["solution_cell"])
    solution = (TASK_DIR / "solution.py").read_text()
    assert "masked_fill" in solution
    assert "masked_fill" not in text(cells["solution_locked"])
    assert "masked_fill" in text(cells["solution_shown"]) and "masked_fill" in html(cells["solution_shown"])


def test_the_history_shows_the_pass_and_the_mistake(run):
    _, home = run
    tasks = json.loads(drill(home, "tasks", "--json").stdout)
    assert next(t for t in tasks if t["id"] == "sdpa")["status"] == "passed"
    assert {t["status"] for t in tasks if t["id"] != "sdpa"} == {"untried"}
    mistakes = json.loads(drill(home, "stats", "--json").stdout)["frequent_mistakes"]
    assert {"code": MUTANT, "runs": 1} in mistakes


def test_tasks_and_today_in_the_notebook(run):
    cells, home = run
    title_zh = yaml.safe_load((TASK_DIR / "task.yaml").read_text())["title"]["zh"]
    assert title_zh in html(cells["tasks"]) and "sdpa: passed" in text(cells["tasks"])
    plan = json.loads(drill(home, "today", "--json").stdout)
    assert plan["next_command"] in text(cells["today"])  # the same plan as the CLI's, with the command to run next
