"""What can be told about the user's file before any torch process starts, from its text alone.

A file that does not parse, or that defines no entry point of the task by name, fails in a few
milliseconds here instead of after two interpreters have imported torch. Torch-free: the CLI
and the whiteboard call :func:`precheck` in their own process (the file is parsed, never run);
the battery calls :func:`missing_entry` with the names the user side reports, so both paths
word the failure alike.
"""

from __future__ import annotations

import ast
from difflib import SequenceMatcher
from pathlib import Path

from drill.grade.kernel_env import require_triton
from drill.grade.report import Check, Report
from drill.grade.tasks import TASKS, TaskSpec, detect
from drill.text.messages import Ev

_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def precheck(path: Path, task: str | None, device: str) -> Report | None:
    """A failed report when the file cannot parse or surely lacks the entry point; None: the judge must look."""
    source = path.read_bytes()
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        return _failed(task, device, syntax_check(exc))
    except ValueError:  # null bytes (Python 3.11): the user side reports it as its import fails
        return None
    names = defined_names(tree)
    spec = TASKS[task] if task else detect(names)
    if spec is not None:
        require_triton(spec.name)  # a detected kernel task without Triton: how to get it, not the user side's ImportError
    if spec is not None and spec.entry in names:
        return None
    wanted = [spec] if spec else list(TASKS.values())
    text = source.decode("utf-8", "replace")
    if any(s.entry in text for s in wanted):  # bound some other way (globals(), exec, a star import): run it
        return None
    return _failed(task, device, missing_entry(path.name, names, spec))


def defined_names(tree: ast.Module) -> dict[str, str]:
    """Module-level names and their kinds (class, function, other), as the user side reports them after import;
    names bound inside top-level if/try/with/for blocks count too (``try: import x except: def f...``)."""
    names: dict[str, str] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                names[node.name] = "class"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[node.name] = "function"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.setdefault((alias.asname or alias.name).split(".")[0], "other")
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            names.setdefault(name.id, "other")
            if isinstance(node, _BLOCKS):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return names


def syntax_check(exc: SyntaxError) -> Check:
    """``syntax error at line 3: expected ':'``, then the line and a caret under the column."""
    line = Ev("syntax error at line {line}: {why}", line=exc.lineno, why=exc.msg)
    if exc.text and exc.text.strip():
        code = exc.text.rstrip("\n").expandtabs()
        indent = len(code) - len(code.lstrip())
        caret = " " * max(0, (exc.offset or 1) - 1 - indent) + "^"
        line = Ev("{what}\n    {code}\n    {caret}", what=line, code=code.strip(), caret=caret)
    return Check("load.import", "robustness", "error", line)


def missing_entry(file_name: str, names: dict[str, str], spec: TaskSpec | None) -> Check:
    """The ``load.entry`` failure: what was wanted, and the closest name the file does define."""
    wanted = spec.entry if spec else Ev("any task's entry point (drill tasks lists them; docs/whiteboard.md has each contract)")
    hint = entry_hint(names, [(spec.name, spec.entry)] if spec else [(s.name, s.entry) for s in TASKS.values()])
    return Check("load.entry", "rules", "fail", Ev("{file} does not define {wanted}{hint}", file=file_name, wanted=wanted, hint=hint),
                 ["not-implemented"])  # fmt: skip


def entry_hint(defined: dict[str, str], wanted: list[tuple[str, str]]) -> str:
    """``; it defines MultiHeadedAttention: did you mean the mha task's MultiHeadAttention? ...`` for a file whose
    class or function is named close to a task's entry point (``wanted``: (task, entry) pairs), else what it defines.
    Whole-name similarity (difflib), not a prefix: ``attention`` is no near miss of ``MultiHeadAttention``."""
    own = [n for n, kind in defined.items() if kind in ("class", "function") and not n.startswith("_")]
    scored = [(SequenceMatcher(None, n.lower(), e.lower()).ratio(), n, task, e) for n in own for task, e in wanted]
    best = max(scored, default=None)
    if best and best[0] >= 0.8:
        _, name, task, entry = best
        return Ev("; it defines {name}: did you mean the {task} task's {entry}? (rename it, or add {entry} = {name})",
                  name=name, task=task, entry=entry)  # fmt: skip
    return Ev("; it defines {names}", names=", ".join(own[:6])) if own else Ev("{name}", name="")


def _failed(task: str | None, device: str, check: Check) -> Report:
    from drill.diagnosis_codes import explain

    return Report(task=task or "unknown", device=device, checks=[check], diagnosis=explain(check.codes))
