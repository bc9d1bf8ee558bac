"""``drill grade --trace`` for tasks that compute in plain Python (bpe, lr_schedule, beam_search): match the
values each line of the user's code bound (drill.grade.user.value_trace) against the reference's named
intermediates, and name the first line where they leave it.

A task's ``intermediates.py`` returns :class:`ValueCase` objects: one call each, and the reference's
steps for it as Python values, in order. Steps whose names differ only in a number ("ids after 2 merges")
are one step of a loop, a *kind*. A recorded value

* matches a step when it equals it: numbers within ``rel`` of the value, sequences (list, tuple, bytes)
  element by element, dicts by key, tensors by their values in any shape; :class:`Either` accepts any of
  its forms, :class:`Unordered` any order (a beam of hypotheses). A list is never a tuple step: ``[97, 97]``
  half built is not the pair ``(97, 97)``;
* is a state of a step when it is a list still being built (a prefix, or part of an unordered one) or a
  dict still being filled (some of its keys, counts not reached yet): fine;
* is aux when it carries no data (a bool, a string, a bare int such as an index, an empty list, a for
  loop's variable, which enumerates and computes nothing): never where the code goes wrong.

Without dataflow, the rules for the first line that goes wrong are about order. First, the first of:

* a list, dict or tensor that nearly equals the next step of some kind (half its elements in place) when
  no later value reaches that step, where the same line's value before was a step or a state (a list
  that stops being the step it was building);
* a line that made one kind of step in the pass before and now makes another (``totals = logp``: the
  log-probs where the totals were), or that makes a later pass's step while this pass's is not reached.

Else the first value that is like no step and after which no value reaches a step not reached before;
else the returned value, when it is not the output. A diverging line that reads none of the index a
condition around it tests names the line that last set that index instead (``i += 1`` where a merge
must skip both tokens: ``out.append(new)`` is right, running it again is not).
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from dataclasses import dataclass, field

import torch

from drill.grade.trace_match import crash
from drill.text.messages import Ev

NEAR = 0.5  # the share of elements in place for a value to be a near miss of a step
SHOWN = 18  # characters of a row's value (drill.views.trace_view.SHAPE_WIDTH)
RANK = {"aux": 0, "feeds": 1, "none": 1, "match": 2, "diverges": 3}  # which of a line's values its row shows


class Either:
    """A step the code may hold in any of these forms ((tokens, score) or (score, tokens) hypotheses)."""

    def __init__(self, *forms):
        self.forms = forms


@dataclass
class Unordered:
    """A collection whose order is the code's choice (the live beams)."""

    items: list


@dataclass
class ValueCase:
    """One call of the user's code on a fixed input, and the reference's intermediates for it, in order."""

    target: object
    args: tuple
    intermediates: list[tuple[str, object]]
    output: str = "output"  # the intermediate the returned value must be
    kwargs: dict = field(default_factory=dict)
    label: Ev | None = None  # which call this is, said with its divergence: "at step 37"
    rel: float = 1e-9  # numbers: Python floats are float64, an exact formula differs by rounding only


OMITTED = object()  # a value the recorder could not copy


def native(v):
    """A recorded value as Python data: ``{"items": ...}`` a dict, ``{"bytes": ...}`` bytes."""
    if type(v) is dict:
        if "bytes" in v:
            return bytes(v["bytes"])
        found = {}
        for key, value in v["items"]:
            try:
                found[_frozen(native(key))] = native(value)
            except TypeError:
                return OMITTED
        return found
    if type(v) is list:
        return [native(x) for x in v]
    if type(v) is tuple:
        return tuple(native(x) for x in v)
    return v


def _frozen(v):
    if isinstance(v, torch.Tensor):
        return tuple(_frozen(x) for x in v.tolist()) if v.dim() else v.item()
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _frozen(x)) for k, x in v.items())
    hash(v)
    return v


def _number(v) -> bool:
    return type(v) in (int, float)


def _items(v) -> list | None:
    return list(v) if type(v) in (list, tuple, bytes) else None


def _flat(v) -> list | None:
    """The numbers of a tensor or of a rectangular nest of lists, in order."""
    if isinstance(v, torch.Tensor):
        return v.reshape(-1).tolist()
    if _number(v) or type(v) is bool:
        return [v]
    items = _items(v)
    if items is None:
        return None
    parts = [_flat(x) for x in items]
    if (
        any(p is None for p in parts)
        or len({len(p) for p in parts}) > 1
        or any(_items(x) is not None for x in items) != all(_items(x) is not None for x in items)
    ):
        return None
    return [x for p in parts for x in p]


def _num(a, b, rel: float) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is bool and type(b) is bool and a == b
    if type(a) is int and type(b) is int:
        return a == b
    return a == b or math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b))


def equal(u, r, rel: float = 1e-9) -> bool:
    """The recorded value ``u`` is the reference's ``r``."""
    if isinstance(r, Either):
        return any(equal(u, f, rel) for f in r.forms)
    if isinstance(r, Unordered):
        items = _items(u)
        return items is not None and len(items) == len(r.items) and _cover(items, r.items, rel) == len(items)
    if isinstance(u, torch.Tensor) or isinstance(r, torch.Tensor):
        if isinstance(r, torch.Tensor) and r.dim() and _items(u) is None and not isinstance(u, torch.Tensor):
            return False  # a bare number is not a tensor step of one element (an index 0 is not the scores [0.])
        a, b = _flat(u), _flat(r)
        return a is not None and b is not None and len(a) == len(b) and all(_num(x, y, rel) for x, y in zip(a, b))
    if _number(u) and _number(r) or type(u) is bool or type(r) is bool:
        return (_number(u) or type(u) is bool) and (_number(r) or type(r) is bool) and _num(u, r, rel)
    a, b = _items(u), _items(r)
    if a is not None and b is not None:
        return len(a) == len(b) and all(equal(x, y, rel) for x, y in zip(a, b))
    if type(u) is dict and type(r) is dict:
        return u.keys() == r.keys() and all(equal(u[k], r[k], rel) for k in u)
    return type(u) is type(r) and type(u) in (str, type(None)) and u == r


def _cover(items: list, refs: list, rel: float) -> int:
    """How many of ``items`` pair off with distinct ``refs`` (a multiset intersection)."""
    free, found = list(refs), 0
    for x in items:
        hit = next((j for j, y in enumerate(free) if equal(x, y, rel)), None)
        if hit is not None:
            free.pop(hit)
            found += 1
    return found


def state_of(u, r, rel: float = 1e-9) -> bool:
    """``u`` is ``r`` still being built: a prefix of a list, part of an unordered one, a dict still filling."""
    if isinstance(r, Either):
        return any(state_of(u, f, rel) for f in r.forms)
    if isinstance(r, Unordered):
        items = _items(u)
        return items is not None and 0 < len(items) < len(r.items) and _cover(items, r.items, rel) == len(items)
    a, b = _items(u), _items(r)
    if a is not None and b is not None and not isinstance(u, torch.Tensor):
        return type(r) is not tuple and 0 < len(a) < len(b) and equal(a, b[: len(a)], rel)
    if type(u) is dict and type(r) is dict:
        return (
            0 < len(u)
            and u.keys() <= r.keys()
            and all(equal(u[k], r[k], rel) or type(u[k]) is int and type(r[k]) is int and 0 < u[k] < r[k] for k in u)
        )  # a count not yet complete
    return False


def similarity(u, r, rel: float = 1e-9) -> float:
    """0..1: how much of ``u`` is in place in ``r`` (for a near miss, and for naming the step meant)."""
    if isinstance(r, Either):
        return max(similarity(u, f, rel) for f in r.forms)
    if isinstance(r, Unordered):
        items = _items(u)
        return 2 * _cover(items, r.items, rel) / (len(items) + len(r.items)) if items is not None and items + r.items else 0.0
    if isinstance(u, torch.Tensor) or isinstance(r, torch.Tensor):
        a, b = _flat(u), _flat(r)
        if a is None or b is None or len(a) != len(b) or not a:
            return 0.0
        return sum(_num(x, y, rel) for x, y in zip(a, b)) / len(a)
    if type(u) is dict and type(r) is dict:
        same = sum(k in r and (equal(u[k], r[k], rel) or type(u[k]) is int and type(r[k]) is int and 0 < u[k] < r[k]) for k in u)
        return 2 * same / (len(u) + len(r)) if u or r else 0.0
    a, b = _items(u), _items(r)
    if a is None or b is None or not a or not b or len(a) > 8 * len(b) + 8:  # far too long to be the step (and slow)
        return 0.0
    try:
        x, y = [_frozen(v) for v in a], [_frozen(v) for v in b]
    except TypeError:
        return 0.0
    best = difflib.SequenceMatcher(None, x, y, autojunk=False).ratio()
    if len(x) < len(y) and type(u) is list:  # a list still being built: against as much of the step
        best = max(best, difflib.SequenceMatcher(None, x, y[: len(x)], autojunk=False).ratio())
    return best


def distance(u, r, rel: float = 1e-9) -> float:
    """How far ``u`` is from ``r`` (inf: not the same kind of thing)."""
    if _number(u) and _number(r):
        return abs(u - r) / max(abs(r), 1e-300) if math.isfinite(u) and math.isfinite(r) else math.inf
    if isinstance(r, Either):
        return min(distance(u, f, rel) for f in r.forms)
    same = similarity(u, r, rel)
    a, b = _items(u), _items(r)
    if (
        a is not None and b is not None and len(a) == len(b)
    ):  # a (score, tokens) pair lines up with (score, tokens), not (tokens, score)
        same += 0.01 * sum((_items(x) is None) == (_items(y) is None) for x, y in zip(a, b)) / max(len(a), 1)
    return 1 - same if same > 0 or a is not None and (b is not None or isinstance(r, Unordered)) else math.inf


def data(v) -> bool:
    """The value carries data: a float, or a container with numbers in it (a bare int is an index or a size)."""
    if type(v) is float:
        return True
    if isinstance(v, torch.Tensor):
        return v.numel() > 0 and v.dtype != torch.bool
    if type(v) is dict:
        return bool(v)
    items = _items(v)
    return items is not None and any((_number(x) and type(x) is not bool) or data(x) for x in items)


def kind(name: str) -> str:
    """The loop step a name is one pass of: its numbers, and the word after one in the singular ("ids after # merge")."""
    return re.sub(r"\d+( [a-z]+?)?s?\b", lambda m: "#" + (m[1] or ""), name)


# --- what the user's lines read -------------------------------------------------------------


class Source:
    """Per line of the user's file: the names its statement reads, and those its enclosing if/while tests read."""

    def __init__(self, lines: list[str]):
        self.reads: dict[int, set[str]] = {}
        self.guards: dict[int, set[str]] = {}
        self.loops: set[int] = set()  # the lines of for statements: their variables enumerate, they compute nothing
        self.starts: dict[int, int] = {}  # a line of a statement spread over several -> its first line
        try:
            self._visit(ast.parse("\n".join(lines)).body, frozenset())
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.reads, self.guards, self.loops, self.starts = {}, {}, set(), {}

    @staticmethod
    def _loads(node) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    def _visit(self, body, guard: frozenset) -> None:
        for stmt in body:
            blocks = [v for name, v in ast.iter_fields(stmt) if name in ("body", "orelse", "finalbody", "handlers")]
            if not blocks:
                self.starts.update(dict.fromkeys(range(stmt.lineno + 1, (stmt.end_lineno or stmt.lineno) + 1), stmt.lineno))
                self.reads[stmt.lineno] = self._loads(stmt)
                self.guards[stmt.lineno] = set(guard)
                continue
            inner = guard
            if isinstance(stmt, (ast.If, ast.While)):
                self.reads[stmt.lineno] = self._loads(stmt.test)
                inner = guard | self._loads(stmt.test)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                self.loops.add(stmt.lineno)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = frozenset()
            for block in blocks:
                for item in block:
                    self._visit(item.body if isinstance(item, ast.ExceptHandler) else [item], inner)


# --- the analysis ---------------------------------------------------------------------------


def short(v, width: int = 40) -> str:
    """A compact repr without spaces (the trace view removes them)."""
    if v is OMITTED:
        return "…"
    if type(v) is float:
        return f"{v:.6g}"
    if isinstance(v, torch.Tensor):
        return f"tensor{list(v.shape)}".replace(" ", "")
    if type(v) is bytes:
        text = repr(v)
    elif type(v) is dict:
        text = "{" + ",".join(f"{short(k, width)}:{short(x, width)}" for k, x in list(v.items())[:width]) + "}"
    elif type(v) in (list, tuple):
        inner = ",".join(short(x, width) for x in v[:width])
        text = ("[" + inner + "]") if type(v) is list else ("(" + inner + ("," if len(v) == 1 else "") + ")")
    else:
        text = repr(v)
    text = text.replace(" ", "")
    return text if len(text) <= width else text[: width - 1] + "…"


def type_name(v) -> str:
    if v is OMITTED:
        return "omitted"
    if isinstance(v, torch.Tensor):
        return f"tensor{list(v.shape)}".replace(" ", "")
    if type(v) in (list, tuple, dict, bytes):
        return f"{type(v).__name__}[{len(v)}]"
    return type(v).__name__


def differs(u, r, rel: float) -> Ev:
    """How ``u`` differs from ``r``, in a few words."""
    while isinstance(r, Either):
        r = min(r.forms, key=lambda f: distance(u, f, rel))
    if isinstance(r, Unordered) and _items(u) is not None:
        extra = next((x for x in _items(u) if not any(equal(x, y, rel) for y in r.items)), None)
        if extra is not None:
            return Ev("yours holds {extra}, which the expected has not: yours {yours}, expected {expected}",
                      extra=short(extra), yours=short(u), expected=short(r.items))  # fmt: skip
        return Ev("yours has {n} items, the expected {m}: yours {yours}, expected {expected}",
                  n=len(_items(u)), m=len(r.items), yours=short(u), expected=short(r.items))  # fmt: skip
    if _number(u) and _number(r):
        return Ev("yours is {yours}, expected {expected}", yours=short(u), expected=short(r))
    a, b = _items(u), _items(r)
    if a is not None and b is not None:
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if not equal(x, y, rel)), None)
        mine, want = short(u), short(r)
        if at is None:
            return Ev("yours has {n} items, the expected {m}: yours {yours}, expected {expected}",
                      n=len(a), m=len(b), yours=mine, expected=want)  # fmt: skip
        return Ev("item {at} is {item} where {wanted} is expected: yours {yours}, expected {expected}",
                  at=at, item=short(a[at]), wanted=short(b[at]), yours=mine, expected=want)  # fmt: skip
    wrong = (
        [k for k in r if k not in u or not equal(u[k], r[k], rel)] + [k for k in u if k not in r]
        if type(u) is dict is type(r)
        else []
    )
    if wrong:
        return Ev("{n} entries differ, e.g. {key}: yours {yours}, expected {expected}",
                  n=len(wrong), key=short(wrong[0]), yours=short(u.get(wrong[0])), expected=short(r.get(wrong[0])))  # fmt: skip
    return Ev("yours is {kind} {yours}, expected {wanted} {expected}",
              kind=type_name(u), yours=short(u), wanted=type_name(r), expected=short(r))  # fmt: skip


def analyse(records: list[dict], case: ValueCase, result, source: Source, finished: bool = True):
    """(status, matched step, value per record; the divergence as (record index, expected step, Ev) or None)."""
    steps = case.intermediates
    names = [n for n, _ in steps]
    kinds = [kind(n) for n in names]
    values = [native(r["value"]) if r["omitted"] is None else OMITTED for r in records]
    n = len(records)
    found: list[list[int]] = [[] for _ in range(n)]
    chosen: list[int | None] = [None] * n
    state = [False] * n
    ahead: list[list[int]] = [[] for _ in range(n)]
    switched: dict[int, int] = {}  # record -> the step of the kind its line made before
    made: list[set[str]] = [set() for _ in range(n)]  # the kinds of step each record's line made before it
    reached: set[int] = set()
    memory: dict[tuple[int, str], set[str]] = {}  # (line, variable) -> the kinds of step it made
    last: dict[tuple[int, str], int] = {}  # (line, variable) -> the step it made last
    before: dict[int, int] = {}  # record -> the step its line made last, where it now makes another
    for i, (r, v) in enumerate(zip(records, values)):
        if v is OMITTED or v is None or type(v) in (str, bool) or r["line"] in source.loops:
            continue
        ks = [k for k, (_, e) in enumerate(steps) if _comparable(v, e) and equal(v, e, case.rel)]
        ahead[i] = _ahead(kinds, reached)
        current = [max(j for j in reached if kinds[j] == c) for c in {kinds[j] for j in reached}]
        states = [k for k in ahead[i] + current if type(v) in (list, dict) and state_of(v, steps[k][1], case.rel)]
        remembered = made[i] = set(memory.get((r["line"], r["name"]), set()))
        own = [k for k in ks if kinds[k] in remembered]
        if own:
            ks = own
        elif remembered and any(kinds[k] in remembered for k in states):
            ks = []
        if states and type(v) is list and all(type(steps[k][1]) is tuple for k in ks):
            ks = []  # a list still being built that happens to equal a tuple step (ids [256, 97] so far, a pair)
        if remembered and ks and not own:
            switched[i], before[i] = _next_of(remembered, kinds, reached), last[(r["line"], r["name"])]
        elif ks and all(any(kinds[j] == kinds[k] and j not in reached for j in range(k)) for k in ks):
            switched[i] = _next_of({kinds[ks[0]]}, kinds, reached)  # a later pass's step: this pass's is skipped
        state[i] = bool(states) and not ks
        if ks:
            fresh = [k for k in ks if k not in reached]
            chosen[i] = min(fresh) if fresh else max(ks)
            reached.update(ks)
            if i not in switched:
                memory.setdefault((r["line"], r["name"]), set()).add(kinds[chosen[i]])
                last[(r["line"], r["name"])] = chosen[i]
        found[i] = ks
    first: dict[int, int] = {}
    for i, ks in enumerate(found):
        for k in ks:
            first.setdefault(k, i)
    new_later = [False] * (n + 1)  # a record after i reaches a step no record before it reached
    for i in reversed(range(n)):
        new_later[i] = new_later[i + 1] or any(first[k] == i for k in found[i])
    matched = [names[k] if k is not None else None for k in chosen]
    status = ["match" if k is not None else "aux" for k in chosen]
    # The first value that nearly is a step never reached (or a line's other step); the first after which nothing new is reached.
    specific = pending = None
    previous: dict[tuple[int, str], int] = {}
    for i, v in enumerate(values):
        key = (records[i]["line"], records[i]["name"])
        last_one, previous[key] = previous.get(key), i
        if i in switched and specific is None:
            specific = i
        if chosen[i] is not None or v is OMITTED or not data(v) or records[i]["line"] in source.loops:
            continue
        status[i] = "feeds"
        if state[i]:
            continue
        on_track = last_one is None or chosen[last_one] is not None or state[last_one]  # a list that stops being a step's
        near = [k for k in ahead[i] if on_track and (type(v) in (list, dict, bytes) or isinstance(v, torch.Tensor))
                and not (type(v) is list and type(steps[k][1]) is tuple) and similarity(v, steps[k][1], case.rel) >= NEAR]  # fmt: skip
        if near and not any(k in first for k in near) and specific is None:
            specific, ahead[i] = i, near
        elif not near and not new_later[i + 1] and pending is None:
            pending = i
    at = specific if specific is not None else pending
    divergence = None
    if at is not None:
        for i in range(at + 1, n):
            if status[i] == "feeds" and not state[i]:
                status[i] = "none"
        status[at] = "diverges"
        if at in switched:
            k, got = switched[at], names[chosen[at]]
            if at in before:
                said = Ev("yours equals `{got}`; in the pass before, this line made `{was}`", got=got, was=names[before[at]])
            else:
                said = Ev("yours is `{got}`, a later pass's value: this pass skipped `{step}`", got=got, step=names[k])
        else:
            k = _meant(records, values, at, case, ahead[at], made[at], first, result if finished else None)
            said = differs(values[at], steps[k][1], case.rel)
        divergence = (at, names[k], said)
    elif finished:
        divergence = _returned(records, case, result, matched, status)
    if divergence is None:
        return status, matched, values, None
    at, step, said = divergence
    moved = _condition(records, values, at, source)
    if moved is None:
        return status, matched, values, (at, step, Ev("`{step}` expected here: {how}", step=step, how=said))
    status[at], status[moved] = "none", "diverges"
    said = Ev("`{index}`, set here, decides the condition line {line} runs under, and line {line} then makes `{step}` wrong: {how}",
              index=records[moved]["name"], line=records[at]["line"], step=step, how=said)  # fmt: skip
    return status, matched, values, (moved, step, said)


def _meant(records, values, at: int, case: ValueCase, ahead: list[int], made: set[str], first: dict[int, int], result) -> int:
    """The step a diverging value was meant to be: of the kind its line made before, named like its variable (the
    output, where it is what the call returns), of a kind the code makes at all, the closest; among the next steps of
    every kind and the line's own current one."""
    steps, v = case.intermediates, values[at]
    names, kinds = [n for n, _ in steps], [kind(n) for n, _ in steps]
    done = [k for k in range(len(steps)) if first.get(k, at) < at]
    current = [max(k for k in done if kinds[k] == c) for c in made if any(kinds[k] == c for k in done)]  # survivors, one too many
    top = records[at]["name"] == "return" and records[at]["call"] == records[0]["call"]
    name = case.output if top or result is not None and equal(v, native(_plain(result)), 0.0) else records[at]["name"]
    word = re.compile(rf"\b{re.escape(name)}\b")  # `progress` meant the step named progress
    makes = {kinds[k] for k in done}
    return min(ahead + current or range(len(steps)), key=lambda k: (kinds[k] not in made, names[k] != name, not word.search(names[k]),
                                                                     kinds[k] not in makes, distance(v, steps[k][1], case.rel), k))  # fmt: skip


def _comparable(v, e) -> bool:
    """A cheap test before :func:`equal`: same kind of container and size."""
    if isinstance(e, Either):
        return any(_comparable(v, f) for f in e.forms)
    if isinstance(e, Unordered):
        return type(v) in (list, tuple) and len(v) == len(e.items)
    if isinstance(v, torch.Tensor) or isinstance(e, torch.Tensor):
        return True
    if _number(v) or type(v) is bool:
        return _number(e) or type(e) is bool
    if type(v) in (list, tuple, bytes):  # a list being built is not a tuple step ([97, 97] so far is not the pair (97, 97))
        return type(e) in (list, tuple, bytes) and len(v) == len(e) and not (type(v) is list and type(e) is tuple)
    return type(v) is type(e)


def _ahead(kinds: list[str], reached: set[int]) -> list[int]:
    """The next step of every kind that is not reached yet."""
    seen, found = set(), []
    for k, name in enumerate(kinds):
        if name not in seen and k not in reached:
            seen.add(name)
            found.append(k)
    return found


def _next_of(remembered: set[str], kinds: list[str], reached: set[int]) -> int:
    ks = [k for k, name in enumerate(kinds) if name in remembered]
    return next((k for k in ks if k not in reached), ks[-1])


def _returned(records, case: ValueCase, result, matched, status):
    """The returned value, when every line matched but it is not the contract's output."""
    expected = dict(case.intermediates)[case.output]
    value = native(_plain(result))
    if equal(value, expected, case.rel):
        return None
    top = min((r["call"] for r in records), default=0)
    i = next((j for j in reversed(range(len(records))) if records[j]["call"] == top and records[j]["name"] == "return"),
             len(records) - 1)  # fmt: skip
    if i < 0:
        return None
    status[i] = "diverges"
    got = matched[i]
    if got and got != case.output:
        return (i, case.output, Ev("the returned value is `{got}`", got=got))
    return (i, case.output, differs(value, expected, case.rel))


def _plain(v):
    """The call's result (decoded from the wire) in the recorder's form; what is not data stays opaque."""
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return {"items": [[k, _plain(x)] for k, x in v.items()]}
    return v if v is None or type(v) in (bool, int, float, str) or isinstance(v, torch.Tensor) else OMITTED


def _condition(records, values, i: int, source: Source) -> int | None:
    """The record that set the index a diverging line's condition reads, where the line itself reads none of it."""
    r = records[i]
    guards, reads = source.guards.get(r["line"], set()), source.reads.get(r["line"], set())
    start = next((j for j in reversed(range(i)) if records[j]["call"] == r["call"] and records[j]["name"] == r["name"]), -1)
    for j in reversed(range(start + 1, i)):
        q = records[j]
        if q["call"] == r["call"] and q["name"] in guards and q["name"] not in reads and q["line"] != r["line"] \
                and type(values[j]) is int:  # fmt: skip
            return j
    return None


def rows_of(records, case: ValueCase, status, matched, values, lines: list[str], rows: dict, divergence) -> None:
    """One row per (line, variable), its latest value of the best status (a step over a state, a state over aux): the
    trace view shows each line once, not every pass of a loop. ``rows`` keeps them in the order their lines first ran
    (a dict: later cases update the same rows); after a divergence, only lines not seen yet are added."""
    stop = divergence[0] if divergence is not None else None
    for i, r in enumerate(records):
        key = (r["line"], r["name"])
        if key in rows and (stop is not None and i > stop or RANK[status[i]] < RANK[rows[key]["status"]]):
            continue
        if key not in rows and any(k[0] == key[0] for k in rows):  # next to its line's rows: the view groups adjacent rows
            items = list(rows.items())
            at = max(j for j, (k, _) in enumerate(items) if k[0] == key[0]) + 1
            rows.clear()
            rows.update(items[:at] + [(key, None)] + items[at:])
        v = values[i]
        shown = short(v, SHOWN)
        if r["name"] == "return":
            shown = "→" + short(v, SHOWN - 1)
        elif isinstance(v, torch.Tensor):
            shown = f"{r['name']}{list(v.shape)}".replace(" ", "")
        elif len(r["name"]) + 1 + len(shown) <= SHOWN:
            shown = f"{r['name']}={shown}"
        code = lines[r["line"] - 1].strip()[:120] if 0 < r["line"] <= len(lines) else ""
        name = matched[i]
        rows[key] = {"line": r["line"], "code": code, "op": r["name"], "shape": shown, "dtype": type_name(v),
                     "value": short(v, 80), "match": name, "status": status[i]}  # fmt: skip


def trace_values(ctx, cases: list[ValueCase], lines: list[str]) -> dict:
    """Run each case under the value recorder in turn and report the first that diverges (tracing.run_trace's result)."""
    from drill.grade.remote import Abort, UserCodeError

    source, rows = Source(lines), {}
    for case in cases:
        try:
            result, records, raised = ctx.user.value_trace(case.target, case.args, case.kwargs)
        except UserCodeError as exc:
            found = crash(str(exc), ctx.path.name, lines)
            return {"first_divergence": found, "pictures": [], "trace": list(rows.values())} if found else {}
        except (Abort, RuntimeError, ValueError, TypeError, IndexError):
            return {}
        records = [{**r, "line": source.starts.get(r["line"], r["line"])} for r in records]  # a statement's first line
        status, matched, values, divergence = analyse(records, case, result, source, finished=raised is None)
        rows_of(records, case, status, matched, values, lines, rows, divergence)
        found = None
        if divergence is not None:
            i, step, said = divergence
            line = records[i]["line"]
            found = {"line": line, "code": lines[line - 1].strip()[:120] if 0 < line <= len(lines) else "", "expected": step,
                     "message": said}  # fmt: skip
        elif raised is not None:
            found = crash(raised, ctx.path.name, lines)
        if found is not None:
            if case.label:
                found.update(input=case.label, message=Ev("{input}: {message}", input=case.label, message=found["message"]))
            return {"first_divergence": found, "pictures": [], "trace": list(rows.values())}
    return {"first_divergence": None, "pictures": [], "trace": list(rows.values())}
