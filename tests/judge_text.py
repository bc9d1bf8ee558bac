"""English written in the judge outside a message id: ``python tests/judge_text.py FILE...`` lists it, and
test_evidence_catalog asserts there is none. The judge's evidence is an ``Ev(msgid, **values)``; a phrase anywhere
else in its code (an f-string, a literal passed to a check, a label) would reach the user untranslated."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PHRASE = re.compile(r"[A-Za-z]{2,}[ ,:;]+[A-Za-z]")  # two words in a row: a phrase of English
MESSAGE_CALLS = {"Ev", "Msg", "DrillError", "StorageError"}  # their first argument is a message id
DEVELOPER_ERRORS = {"InternalError", "ValueError", "TypeError", "KeyError", "RuntimeError", "AssertionError",
                    "NotImplementedError", "WireError", "LookupError", "AttributeError", "NoTrace"}  # fmt: skip - drill's own faults, for --debug
TEXT_TOOLS = {"compile", "search", "match", "fullmatch", "sub", "findall", "finditer", "split", "filterwarnings",
              "simplefilter", "einsum"}  # fmt: skip - patterns that read other programs' text
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
SHOWN_AS_IS = "# shown as is"  # a line's text is no sentence: a proper noun, a code name with spaces, a key never shown


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def english(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each phrase of English in ``path`` that no message id, docstring or developer error holds."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()  # ids of nodes whose strings are fine

    def allow(node: ast.AST) -> None:
        allowed.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                allow(body[0])
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in MESSAGE_CALLS and node.args and isinstance(node.args[0], ast.Constant):
                allowed.add(id(node.args[0]))
            if name in DEVELOPER_ERRORS | TEXT_TOOLS:
                allow(node)
        if isinstance(node, ast.Raise) and node.exc is not None and _name(getattr(node.exc, "func", node.exc)) in DEVELOPER_ERRORS:
            allow(node)
        if isinstance(node, ast.Assert) and node.msg is not None:
            allow(node.msg)
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed and PHRASE.search(node.value):
            if not any(SHOWN_AS_IS in lines[n - 1] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)):
                found.append((node.lineno, node.value))
    return sorted(found)


def chinese(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each string in ``path`` that holds Chinese, outside docstrings and ``# shown as is`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and CJK.search(node.value) and SHOWN_AS_IS not in lines[node.lineno - 1])  # fmt: skip


if __name__ == "__main__":
    total = 0
    for arg in sys.argv[1:]:
        for line, text in english(Path(arg)):
            total += 1
            print(f"{arg}:{line}: {text!r}")
    print(f"{total} phrases of English outside a message id")
    sys.exit(1 if total else 0)
