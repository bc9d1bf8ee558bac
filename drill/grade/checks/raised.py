"""Name the cause of an exception the user's code raised: a file that raises on every call has no output to
test hypotheses on, but the exception, its line and the shapes in torch's message are evidence too.

Runs in the judge. The user side reports only text (type, message, the user's frames); each cause is
confirmed against the user's own source, read here as text and parsed, never imported. A code found here
only names the cause of a check that already errored: nothing the user side writes can turn it into a pass.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

VIEW = re.compile(r"raised RuntimeError: view size is not compatible with input tensor's size and stride")
BROADCAST = re.compile(r"raised RuntimeError: The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) "
                       r"at non-singleton dimension \d+")  # fmt: skip
FRAME = re.compile(r"(?:\(at |; )(?P<file>[^:;()]+):(?P<line>\d+) in ")
REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "var", "std", "logsumexp", "norm", "prod"})


def raised_codes(message: str, path: Path) -> list[str]:
    """Codes for the cause of the user's exception, described by ``message`` (loader.describe_exception's
    "raised T: text (at file:line in f: source; ...)"), when the line it names in ``path`` shows that cause."""
    view, broadcast = VIEW.match(message), BROADCAST.match(message)
    if not (view or broadcast):
        return []
    path = Path(path).resolve()  # the user side names the file it loaded, the resolved path
    frames = [m for m in FRAME.finditer(message) if m.group("file") == path.name]
    if not frames:
        return []
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    line = int(frames[-1].group("line"))  # the innermost of the user's frames: where the exception left their code
    nodes = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == line]
    if view and any(_is_call(n, {"view"}) for n in nodes):
        return ["view-non-contiguous"]
    if broadcast:
        reduced = _reduced_names(tree, line)
        operands = [side for n in nodes if isinstance(n, ast.BinOp) for side in (n.left, n.right)]
        if any(_drops_dim(side) or isinstance(side, ast.Name) and side.id in reduced for side in operands):
            return ["reduction-without-keepdim"]
    return []


def _is_call(node, names) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _drops_dim(node) -> bool:
    """A reduction over a given dimension without keepdim=True (``x.max(-1).values`` and ``[0]`` included)."""
    if isinstance(node, ast.Attribute) and node.attr == "values" or isinstance(node, ast.Subscript):
        node = node.value
    if not _is_call(node, REDUCTIONS):
        return False
    keywords = {k.arg: k.value for k in node.keywords}
    keep = keywords.get("keepdim")
    if keep is not None and not (isinstance(keep, ast.Constant) and keep.value is False):
        return False
    own = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"  # torch.sum(x, dim): x comes first
    return "dim" in keywords or "axis" in keywords or len(node.args) > int(own)


def _reduced_names(tree, line: int) -> set[str]:
    """Names whose latest assignment before ``line`` is a reduction that dropped its dimension."""
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= n.end_lineno]
    latest: dict[str, tuple[int, bool]] = {}
    for node in ast.walk(max(scopes, key=lambda n: n.lineno) if scopes else tree):  # the function that raised
        if isinstance(node, ast.Assign) and node.lineno < line:
            for target in node.targets:
                if isinstance(target, ast.Tuple) and target.elts:  # m, _ = x.max(dim=-1)
                    target = target.elts[0]
                if isinstance(target, ast.Name) and node.lineno >= latest.get(target.id, (0, False))[0]:
                    latest[target.id] = (node.lineno, _drops_dim(node.value))
    return {name for name, (_, dropped) in latest.items() if dropped}
