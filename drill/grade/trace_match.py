"""Match what each line of the user's code produced against the reference's named intermediates.

Runs in the judge on the records of drill.grade.user.trace. A user tensor matches an intermediate
when some view of the intermediate (a permutation of its dims, then merging or splitting adjacent
dims, or a broadcast) equals it under the numerical checks' tolerance rule; the trace inputs have
pairwise different sizes, so a view never lines up by accident. A record that matches nothing but
feeds one that does (the steps of a hand-written softmax) is fine; the first record that matches
nothing, feeds nothing that matches and whose own inputs matched is where the code leaves the reference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import permutations
from types import SimpleNamespace

import torch

from drill.grade.tolerance import judge
from drill.grade.user.spy import builtin_name
from drill.text.messages import Ev

MASKED = -1e4  # a user's fill at or below this, where the reference has -inf, is a mask too (-1e9, finfo.min)
SCALING = {"div", "mul", "__truediv__", "__mul__", "__rmul__", "true_divide", "multiply", "divide", "div_", "mul_"}
CONSTRUCTORS = {"zeros_like", "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full"}
LOOKAHEAD = 3  # intermediates after the last matched input that a diverging step may have meant
PAIRS = Ev("(query, key) pairs")  # what an attention task's masked entries are
ENTRIES = Ev("entries")


@dataclass
class Case:
    """One fixed trace input: what to call, and the reference's intermediates for it, in order (float64)."""

    target: object
    args: tuple
    intermediates: list[tuple[str, torch.Tensor]]
    output: str = "output"  # the intermediate the returned value must be
    kwargs: dict = field(default_factory=dict)
    exact: bool = False
    all_data: bool = False  # integer inputs carry data too (rope's positions), not only floating ones
    factors: list[tuple[float, Ev]] = field(default_factory=list)  # (yours / expected, what it means)
    table: bool = False  # the call takes no tensors (sinusoidal): what arange/zeros make plays the inputs' part
    integers: bool = False  # integer steps made from the inputs carry data too (quantize's q), compared exactly; bools stay aux
    returned: tuple[str, ...] = ()  # the steps a tuple-returning call gives back (dQ, dK, dV): used, though no op reads them
    unit: Ev = ENTRIES  # what one masked entry is, in messages: PAIRS for attention
    removing: tuple[str, ...] = ()  # the bool steps whose True means removed (masked_fill's mask), not allowed
    updates: tuple[int, ...] = ()  # the call inputs (in the order sent) the contract updates in place (adamw's param, m, v)
    label: Ev | None = None  # a stress input: what is special about it, shown with its divergence


def _groups(fine, coarse) -> bool:
    """``coarse`` is ``fine`` with runs of adjacent dims merged (size-1 dims ignored)."""
    fine, coarse = [n for n in fine if n != 1], [n for n in coarse if n != 1]
    i = 0
    for size in coarse:
        product = 1
        while product < size and i < len(fine):
            product *= fine[i]
            i += 1
        if product != size:
            return False
    return i == len(fine)


def _keeps_equal_sizes(order, shape) -> bool:
    """Dims of equal size keep their order: a T x T matrix is never matched transposed."""
    seen: dict[int, int] = {}
    for dim in order:
        if seen.get(shape[dim], -1) > dim:
            return False
        seen[shape[dim]] = dim
    return True


def _close(user: torch.Tensor, expected: torch.Tensor) -> bool:
    if not expected.is_floating_point():
        return not user.is_floating_point() and torch.equal(user.to(expected.dtype), expected)
    user = user.double()
    if user.dtype != expected.dtype:
        user = user.to(expected.dtype)
    neg = expected == float("-inf")
    if neg.any():
        user = torch.where(neg & (user <= MASKED), expected, user)
    return judge(user, expected, expected.float()).ok  # as loose as float32 rounding: code may compute in fp32


def views(expected: torch.Tensor, shape) -> list[torch.Tensor]:
    """The views of ``expected`` with the user's ``shape``: permuted then regrouped, or broadcast."""
    shape = torch.Size(shape)
    found = []
    if expected.numel() == shape.numel():
        orders = permutations(range(expected.dim())) if expected.dim() <= 5 else [tuple(range(expected.dim()))]
        for order in orders:
            if not _keeps_equal_sizes(order, expected.shape):
                continue
            permuted = expected.permute(order)
            if _groups(permuted.shape, shape) or _groups(shape, permuted.shape):
                found.append(permuted.reshape(shape))
        return found
    for small, big in ((expected, shape), (None, expected.shape)):
        if small is not None and small.dim() <= len(big):
            try:
                found.append(torch.broadcast_to(small, big))
            except RuntimeError:
                pass
    return found


def matches(user: torch.Tensor, expected: torch.Tensor) -> bool:
    if user.numel() < expected.numel():  # a block of the reference (flash's query blocks), or a broadcast of it
        return _is_block(user, expected) or _broadcasts(user, expected)
    if user.numel() == expected.numel() and not _same_mass(user, expected):
        return False
    return any(_close(user, view) for view in views(expected, user.shape))


def _same_mass(user: torch.Tensor, expected: torch.Tensor) -> bool:
    """A cheap necessary condition for some view of ``expected`` to equal ``user``: every permutation and
    regrouping keeps the sum of |values| (masked entries aside). Far looser than the tolerance rule, it only
    spares the views of the pairs that cannot match (most of them: a trace compares every record with every step)."""
    if not (user.is_floating_point() and expected.is_floating_point()):
        return True
    u = user.detach().double()
    if torch.isnan(u).any() or (u == float("inf")).any():
        return True  # undecided: the tolerance rule says why not
    finite = torch.isfinite(expected)
    masked = not bool(finite.all())
    mass = float(expected[finite].abs().sum())
    kept = u[(u > MASKED) & torch.isfinite(u)] if masked else u
    return abs(float(kept.abs().sum()) - mass) <= 2e-2 * mass + 1e-6 * expected.numel()


def _broadcasts(user: torch.Tensor, expected: torch.Tensor) -> bool:
    try:
        spread = torch.broadcast_to(user, expected.shape)
    except RuntimeError:
        return False
    return _same_mass(spread, expected) and _close(spread, expected)


def _is_block(user: torch.Tensor, expected: torch.Tensor) -> bool:
    """``user`` is ``expected`` cut along one dim (size-1 dims ignored), at some offset."""
    u = user.reshape([n for n in user.shape if n != 1])
    e = expected.reshape([n for n in expected.shape if n != 1])
    if u.dim() != e.dim():
        return False
    smaller = [d for d in range(u.dim()) if u.shape[d] != e.shape[d]]
    if len(smaller) != 1 or u.shape[smaller[0]] > e.shape[smaller[0]]:
        return False
    dim, size = smaller[0], u.shape[smaller[0]]
    blocks = (e.narrow(dim, start, size) for start in range(e.shape[dim] - size + 1))
    return any(_same_mass(u, block) and _close(u, block) for block in blocks)


def differs(user: torch.Tensor, expected: torch.Tensor, case: Case, step: str | None = None) -> Ev:
    """How ``user`` differs from the ``step`` named ``expected`` (same shape after :func:`views`), in a few words."""
    unit = case.unit
    candidates = views(expected, user.shape) if user.numel() == expected.numel() else []
    if not candidates:
        return Ev("yours has shape {yours}, the expected {expected}", yours=list(user.shape), expected=list(expected.shape))
    if expected.dtype == torch.bool:
        exp = candidates[0]
        if user.dtype != torch.bool and torch.equal(user.double(), exp.double()):
            return Ev("the right values as {dtype}, not bool", dtype=str(user.dtype).removeprefix("torch."))
        extra, missing = int(((user != 0) & ~exp).sum()), int(((user == 0) & exp).sum())
        if step in case.removing:  # True: removed
            return Ev.seq([Ev("{n} {unit} removed that the contract keeps", n=extra, unit=unit)] * bool(extra)
                          + [Ev("{n} {unit} kept that the contract removes", n=missing, unit=unit)] * bool(missing))  # fmt: skip
        return Ev.seq([Ev("{n} {unit} allowed that the contract masks", n=extra, unit=unit)] * bool(extra)
                      + [Ev("{n} {unit} masked that the contract allows", n=missing, unit=unit)] * bool(missing))  # fmt: skip
    user, candidates = user.double(), [c.double() for c in candidates]
    exp = min(candidates, key=lambda e: _distance(user, e))
    if exp.dim() >= 2 and exp.shape[-1] == exp.shape[-2] and _close(user, exp.transpose(-2, -1)):
        if case.unit == PAIRS:
            return Ev("yours is the expected transposed: queries and keys swapped")
        return Ev("yours is the expected transposed")
    if exp.dim() and exp.shape[-1] > 1 and _close(user, exp.flip(-1)):
        return Ev("yours is the expected reversed along the last dim (an ascending sort where descending was meant?)")
    blown = ~torch.isfinite(user) & torch.isfinite(exp) & ~(user <= MASKED)
    if blown.any():
        n = int(blown.sum())
        if n == 1:
            return Ev("1 value is inf or NaN where the expected is finite: the computation overflows here")
        return Ev("{n} values are inf or NaN where the expected is finite: the computation overflows here", n=n)
    neg_e, neg_u = exp == float("-inf"), user <= MASKED
    if not neg_e.any() and (user == float("-inf")).any():  # no mask here: a -inf is a log of 0
        n = int((user == float("-inf")).sum())
        if n == 1:
            return Ev("1 value is -inf where the expected is finite: a log of 0 (it underflows here)")
        return Ev("{n} values are -inf where the expected is finite: a log of 0 (it underflows here)", n=n)
    if (neg_e != neg_u).any():
        missing, extra = int((neg_e & ~neg_u).sum()), int((neg_u & ~neg_e).sum())
        return Ev.seq([Ev("{n} masked {unit} are not masked in yours", n=missing, unit=unit)] * bool(missing)
                      + [Ev("{n} allowed {unit} are masked in yours", n=extra, unit=unit)] * bool(extra))  # fmt: skip
    if exp.dim() >= 2 and torch.isfinite(exp).all() and torch.allclose(exp.sum(-1), torch.ones((), dtype=exp.dtype)):
        for dim in range(user.dim() - 1):
            sums = user.sum(dim)
            finite = torch.isfinite(sums)
            if finite.any() and torch.allclose(sums[finite], torch.ones((), dtype=user.dtype)):
                if case.unit == PAIRS:
                    return Ev("yours sums to 1 over dim {dim}, the expected over the last dim (keys)", dim=dim - user.dim())
                return Ev("yours sums to 1 over dim {dim}, the expected over the last dim", dim=dim - user.dim())
        zero_e, zero_u = exp == 0, user.abs() < 1e-12
        if (exp >= 0).all() and (zero_e & ~zero_u).any():
            return Ev("{n} {unit} the mask removes get weight in yours", n=int((zero_e & ~zero_u).sum()), unit=unit)
    finite = torch.isfinite(exp) & torch.isfinite(user) & (exp.abs() > 1e-9)
    if finite.any():
        ratio = (user[finite] / exp[finite]).median().item()
        meaning = next((said for f, said in case.factors if math.isclose(ratio, f, rel_tol=1e-6)), None)
        several = int(finite.sum()) > 1  # one number is a multiple, and an offset, of any other: only a known factor says more
        if abs(ratio - 1) > 1e-6 and ratio != 0 and (several or meaning) and _close(user[finite], ratio * exp[finite]):
            if meaning:
                return Ev("yours is {ratio:.4g} × the expected: {meaning}", ratio=ratio, meaning=meaning)
            return Ev("yours is {ratio:.4g} × the expected", ratio=ratio)
        shift = (user[finite] - exp[finite]).median().item()
        if abs(shift) > 1e-9 and several and _close(user[finite], exp[finite] + shift):
            if shift > 0:
                return Ev("yours is the expected +{size:.4g} everywhere: an offset", size=shift)
            return Ev("yours is the expected -{size:.4g} everywhere: an offset", size=-shift)
    if torch.isfinite(exp).all() and _close(user.reshape(-1).sort().values, exp.reshape(-1).sort().values):
        return Ev("the same numbers in another arrangement: a view or reshape where a transpose was needed")
    diff = (user - exp).abs().nan_to_num(nan=float("inf"))
    where = [int(i) for i in (diff == diff.max()).nonzero()[0]]
    return Ev("max difference {big:.3g} at {where}: yours {mine:.4g}, expected {want:.4g}", big=diff.max().item(), where=where,
              mine=user[tuple(where)].item(), want=exp[tuple(where)].item())  # fmt: skip


def scaled(how: Ev) -> bool:
    """The finding is "yours is r × the expected" (the only ones with a ratio)."""
    return "ratio" in how.params


def analyse(records: list[dict], case: Case, result, lines: list[str], leaves: list[bool],
            finished: bool = True, forbidden: dict[str, str] | None = None) -> tuple[list[dict], dict | None]:
    """(the ``trace`` rows, ``first_divergence`` or None). ``leaves[i]``: call input i is floating data;
    ``finished``: the call returned (else the records stop at an exception and there is no result to judge);
    ``forbidden``: the task's own builtins (F.layer_norm), named where called."""
    forbidden = forbidden or {}
    names = [n for n, _ in case.intermediates]

    def code(line: int) -> str:
        return lines[line - 1].strip()[:120] if 0 < line <= len(lines) else ""

    n = len(records)
    data = [False] * n  # a floating tensor computed from the call's floating inputs
    matched: list[int | None] = [None] * n
    best = [-1] * n  # the latest intermediate among a record's matched ancestors
    users = [[] for _ in range(n)]
    const = [False] * n  # made from no input at all (torch.ones, arange): never where the code leaves the reference
    for i, r in enumerate(records):
        ins = r["inputs"]
        for j in ins:
            if j >= 0:
                users[j].append(i)
        from_data = any((leaves[-1 - j] if -1 - j < len(leaves) else False) if j < 0 else data[j] for j in ins)
        const[i] = not ins if case.table else all(j >= 0 and const[j] for j in ins)
        t = r["tensor"]
        numeric = t is not None and (t.is_floating_point() or case.integers and t.dtype != torch.bool)
        numeric = numeric and r["op"] not in CONSTRUCTORS  # zeros_like(x) carries x's shape, not its values
        data[i] = t is not None and (case.exact or bool((from_data or case.table and ins) and numeric))
        inherited = max((best[j] for j in ins if j >= 0), default=-1)
        if data[i]:
            found = [k for k, (_, e) in enumerate(case.intermediates) if matches(t, e)]
            if found:  # the latest one not before its inputs: a view of q is still q
                later = [k for k in found if k >= inherited]
                matched[i] = max(later) if later else max(found)
        best[i] = matched[i] if matched[i] is not None else inherited
    feeds = [False] * n
    for i in reversed(range(n)):
        feeds[i] = any(matched[u] is not None or feeds[u] for u in users[i])

    rows = []
    for i, r in enumerate(records):
        if not data[i]:
            status = "aux"
        elif matched[i] is not None:
            status = "match"
        elif feeds[i]:
            status = "feeds"
        else:
            status = "none"
        name = names[matched[i]] if matched[i] is not None else None
        rows.append({"line": r["line"], "code": code(r["line"]), "op": r["op"], "shape": r["shape"], "dtype": r["dtype"],
                     "match": name, "status": status})  # fmt: skip

    def diverge(i: int, expected: str | None, said: Ev) -> dict:
        rows[i]["status"] = "diverges"
        return {"line": records[i]["line"], "code": code(records[i]["line"]), "expected": expected, "message": said}

    def named(step: str) -> Ev:
        return Ev("`{step}`", step=step)

    for i, r in enumerate(records):
        builtin = builtin_name(SimpleNamespace(__name__=r["op"])) or forbidden.get(r["op"].split(".")[0])
        if builtin:
            return rows, diverge(i, None, Ev("calls torch's builtin `{builtin}`", builtin=builtin))
        if r["mutates"] >= 0 and r["mutates"] not in case.updates:
            if r["op"] == "__setitem__":
                return rows, diverge(i, None, Ev("assigns into an input (`x[...] = ...`): the caller's tensor is modified"))
            return rows, diverge(i, None, Ev("`{op}` changes an input in place: the caller's tensor is modified", op=r["op"]))
    for i, r in enumerate(records):
        if rows[i]["status"] != "none" or const[i]:
            continue
        if not all(j < 0 or matched[j] is not None or feeds[j] or not data[j] or const[j] for j in r["inputs"]):
            continue
        inherited = max((best[j] for j in r["inputs"] if j >= 0), default=-1)
        later = [(item, _distance(r["tensor"], item[1])) for item in case.intermediates[inherited + 1 :]]
        fitting = [pair for pair in later if pair[1] < math.inf][:LOOKAHEAD]
        if not fitting and inherited >= 0 and _distance(r["tensor"], case.intermediates[inherited][1]) < math.inf:
            fitting = [(case.intermediates[inherited], 0.0)]  # a step that should change nothing (dropout in eval)
        if not fitting:
            sources = sorted({names[best[j]] for j in r["inputs"] if j >= 0 and best[j] >= 0} | (
                {names[0]} if any(j < 0 for j in r["inputs"]) else set()))
            made = Ev.seq([named(n) for n in sources], "list")
            return rows, diverge(i, None, Ev("no step of the reference has this value (shape {shape}), made from {made}",
                                             shape=r["shape"], made=made))  # fmt: skip
        ahead, distances = [item for item, _ in fitting], [d for _, d in fitting]
        name, expected = ahead[min(range(len(ahead)), key=lambda a: (distances[a], -a))]
        dead = next((j for j in range(i) if matched[j] is not None and matched[j] > inherited and not users[j]
                     and data[j] and names[matched[j]] not in case.returned), None)  # fmt: skip
        if dead is not None:
            return rows, diverge(dead, names[matched[dead]], Ev(
                "computes {step}, but its result is never used (an out-of-place op such as masked_fill returns a new tensor)",
                step=named(names[matched[dead]])))  # fmt: skip
        how = differs(r["tensor"], expected, case, name)
        message = Ev("{step} expected here: {how}", step=named(name), how=how)
        origin = _mask_origin(records, data, i, expected)
        if origin is not None:
            return rows, diverge(origin, name, Ev("the mask built here is not the contract's: {message}", message=message))
        if scaled(how) and r["op"] not in SCALING:  # a scale left out: it belonged upstream
            source = max((j for j in r["inputs"] if j >= 0 and matched[j] is not None), default=None)
            if source is not None and records[source]["line"] != r["line"] and records[source]["shape"] == r["shape"]:
                after = names[min(matched[source] + 1, len(names) - 1)]
                return rows, diverge(source, after, Ev("{step} expected after this line: {how}", step=named(after), how=how))
        return rows, diverge(i, name, message)
    if not finished:
        return rows, None
    if isinstance(result, (tuple, list)) and result:
        result = result[0]
    final = dict(case.intermediates)[case.output]
    last = next((i for i in reversed(range(n)) if data[i]), None)
    if isinstance(result, torch.Tensor) and last is not None and result.shape != final.shape:
        shapes = list(result.shape), list(final.shape)
        return rows, diverge(last, case.output, Ev("returns shape {yours}; the contract's output is {expected}",
                                                   yours=shapes[0], expected=shapes[1]))  # fmt: skip
    if isinstance(result, torch.Tensor) and result.is_floating_point() and last is not None and not matches(result, final):
        got = names[matched[last]] if matched[last] is not None else None
        if got and got != case.output:
            what = Ev("the returned value is {got}, not {output}", got=named(got), output=named(case.output))
        else:
            what = Ev("{step} expected here: {how}", step=named(case.output), how=differs(result, final, case, case.output))
        return rows, diverge(last, case.output, what)
    return rows, None


def _mask_origin(records, data, i: int, expected: torch.Tensor) -> int | None:
    """The earlier line that built a wrong mask the diverging record ``i`` applies, if the mask is what is wrong."""
    allowed = torch.isfinite(expected)
    if allowed.all():
        return None
    aux = [j for j in records[i]["inputs"] if j >= 0 and not data[j] and records[j]["tensor"] is not None]
    for j in aux:
        try:
            pattern = torch.broadcast_to(records[j]["tensor"] != 0, allowed.shape)
        except RuntimeError:
            continue
        if torch.equal(pattern, allowed) or torch.equal(pattern, ~allowed):
            return None
    line, found, todo = records[i]["line"], None, list(aux)
    while todo:
        j = todo.pop()
        if records[j]["line"] != line and (found is None or j > found):
            found = j
        todo += [k for k in records[j]["inputs"] if k >= 0 and not data[k]]
    return found


def _distance(user: torch.Tensor | None, expected: torch.Tensor) -> float:
    """How far apart (for picking the intermediate a diverging step meant): mask pattern first, then values."""
    if user is None:
        return math.inf
    candidates = views(expected, user.shape) if user.numel() == expected.numel() else []
    if not candidates:
        return math.inf
    user = user.double()
    best = math.inf
    for e in (c.double() for c in candidates):
        masked_e, masked_u = e == float("-inf"), user <= MASKED
        pattern = 0 if torch.equal(masked_e, masked_u) else 1 if masked_e.any() and masked_u.any() else 2
        both = torch.isfinite(e) & torch.isfinite(user)
        value = float((user - e)[both].abs().mean()) / (float(e[both].abs().mean()) + 1e-12) if both.any() else 1.0
        best = min(best, pattern * 10 + min(value, 9.0))
        if e.dim() and e.shape[-1] > 1 and e.is_floating_point() and _close(user, e.flip(-1)):
            best = min(best, 0.5)  # the step, reversed (an ascending sort): this is the step meant
    return best


def crash(message: str, name: str, lines: list[str]) -> dict | None:
    """The line of the user's file an exception came from (the innermost one the message names)."""
    found = re.findall(re.escape(name) + r":(\d+) in ", message)
    if not found:
        return None
    line = int(found[-1])
    code = lines[line - 1].strip()[:120] if 0 < line <= len(lines) else ""
    text = message.split(" (at ")[0][:300]
    raised = re.match(r"raised (\w+)(?:: |$)", text)  # Python's own message stays as Python wrote it
    if raised is None:
        said = Ev("{error}", error=text)
    elif text[raised.end():]:
        said = Ev("raised {exception}: {error}", exception=raised[1], error=text[raised.end():])
    else:
        said = Ev("raised {exception}", exception=raised[1])
    return {"line": line, "code": code, "expected": None, "message": said}
