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
    found = _raising_line(message, path)
    if found is None:
        return []
    tree, line = found
    nodes = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == line]
    if view and any(_is_call(n, {"view"}) for n in nodes):
        return ["view-non-contiguous"]
    if broadcast:
        reduced, scalars = _reduced_names(tree, line), _scalar_names(tree, line)
        # a number times a reduction (momentum * mean) broadcasts anywhere: only a tensor beside it can fail to
        operands = [side for n in nodes if isinstance(n, ast.BinOp)
                    for side, other in ((n.left, n.right), (n.right, n.left)) if not _scalar(other, scalars)]  # fmt: skip
        if any(_reduced(side, reduced, scalars) for side in operands):
            return ["reduction-without-keepdim"]
    return []


def raising_source(message: str, path: Path) -> str:
    """The text of the user's line the exception left their code from ("" when no frame of theirs is named)."""
    found = _raising_line(message, path)
    statement = _statement(*found) if found else None
    return ast.unparse(statement) if statement is not None else ""


def _raising_line(message: str, path: Path) -> tuple[ast.Module, int] | None:
    """(the parsed file, the line) of the innermost of the user's frames that ``message`` names."""
    path = Path(path).resolve()  # the user side names the file it loaded, the resolved path
    frames = [m for m in FRAME.finditer(message) if m.group("file") == path.name]
    if not frames:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    return tree, int(frames[-1].group("line"))


def _statement(tree, line: int):
    """The innermost statement that spans ``line``."""
    spans = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return min(spans, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)


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
    dim = keywords.get("dim", keywords.get("axis", node.args[int(own)] if len(node.args) > int(own) else None))
    return dim is not None and not _leading(dim)


def _leading(dim) -> bool:
    """dim 0 alone (``x.mean(0)``, ``dim=[0]``): dropping the leading dim never changes how the rest broadcasts."""
    dims = dim.elts if isinstance(dim, (ast.List, ast.Tuple)) else [dim]
    return len(dims) == 1 and isinstance(dims[0], ast.Constant) and dims[0].value == 0


ELEMENTWISE = {"rsqrt", "sqrt", "exp", "log", "reciprocal", "abs", "clamp", "clamp_min", "clamp_max", "pow", "tanh", "sigmoid", "float",
               "double", "to"}  # fmt: skip


def _reduced(node, reduced: set[str], scalars: set[str]) -> bool:
    """A reduction that dropped its dimension, inline or by name, or such a reduction scaled by a number or passed
    through an elementwise function (``torch.rsqrt(ms + eps)``, ``var.sqrt()``): its shape is the reduction's."""
    if isinstance(node, ast.BinOp):
        return any(_scalar(a, scalars) and _reduced(b, reduced, scalars) for a, b in ((node.left, node.right), (node.right, node.left)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ELEMENTWISE:
        inputs = [*node.args[:1], node.func.value]  # torch.rsqrt(x) or x.rsqrt()
        if any(_reduced(n, reduced, scalars) for n in inputs):
            return True
    return _drops_dim(node) or isinstance(node, ast.Name) and node.id in reduced


def _scalar(node, scalars: set[str]) -> bool:
    """A number: a literal, a name or ``self.name`` set only from numbers (``eps=1e-5``), or arithmetic on those."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _scalar(node.operand, scalars)
    if isinstance(node, ast.BinOp):
        return _scalar(node.left, scalars) and _scalar(node.right, scalars)
    return _name(node) in scalars


def _name(node) -> str | None:
    """``x`` for a name, ``self.x`` for an attribute of self."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _scalar_names(tree, line: int) -> set[str]:
    """The raising function's parameters with a number as default, and the ``self`` attributes assigned only
    numbers or such parameters anywhere in the file (``self.eps, self.momentum = eps, momentum`` in __init__)."""
    defaults = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        args = fn.args.posonlyargs + fn.args.args
        pairs = [*zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults), *zip(fn.args.kwonlyargs, fn.args.kw_defaults)]
        defaults[fn] = {a.arg for a, d in pairs if d is not None and _scalar(d, set())}
    values: dict[str, bool] = {}
    for fn, numbers in defaults.items():
        for node in ast.walk(fn):
            pairs = []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts):
                        pairs += zip(target.elts, node.value.elts)
                    else:
                        pairs.append((target, node.value))
            for target, value in pairs:
                name = _name(target)
                if name and name.startswith("self."):
                    values[name] = values.get(name, True) and _scalar(value, numbers)
    around = [fn for fn in defaults if fn.lineno <= line <= fn.end_lineno]
    own = defaults[max(around, key=lambda fn: fn.lineno)] if around else set()
    return {name for name, number in values.items() if number} | own


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
