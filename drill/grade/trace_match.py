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
from typing import NamedTuple

import torch

from drill.grade.tolerance import judge
from drill.grade.user.spy import builtin_name

MASKED = -1e4  # a user's fill at or below this, where the reference has -inf, is a mask too (-1e9, finfo.min)
SCALING = {"div", "mul", "__truediv__", "__mul__", "__rmul__", "true_divide", "multiply", "divide", "div_", "mul_"}
CONSTRUCTORS = {"zeros_like", "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full"}
LOOKAHEAD = 3  # intermediates after the last matched input that a diverging step may have meant
PAIRS = ("(query, key) pairs", "个 (query, key) 对")  # what an attention task's masked entries are
ENTRIES = ("entries", "个元素")


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
    factors: list[tuple[float, str, str]] = field(default_factory=list)  # (yours / expected, what it means, in Chinese)
    table: bool = False  # the call takes no tensors (sinusoidal): what arange/zeros make plays the inputs' part
    integers: bool = False  # integer steps made from the inputs carry data too (quantize's q), compared exactly; bools stay aux
    returned: tuple[str, ...] = ()  # the steps a tuple-returning call gives back (dQ, dK, dV): used, though no op reads them
    zh: dict[str, str] = field(default_factory=dict)  # Chinese for the step names that are words, not code ("k chunk 1")
    unit: tuple[str, str] = ENTRIES  # what one masked entry is, in messages: PAIRS for attention
    removing: tuple[str, ...] = ()  # the bool steps whose True means removed (masked_fill's mask), not allowed
    updates: tuple[int, ...] = ()  # the call inputs (in the order sent) the contract updates in place (adamw's param, m, v)
    label: tuple[str, str] | None = None  # a stress input: what is special about it (en, zh), shown with its divergence


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


class Said(NamedTuple):
    """One finding in both languages; ``scale`` when it is "yours is r × the expected"."""

    en: str
    zh: str
    scale: bool = False


def _joined(parts: list[Said]) -> Said:
    return Said("; ".join(p.en for p in parts), "；".join(p.zh for p in parts))


def _values(n: int) -> str:
    return "1 value is" if n == 1 else f"{n} values are"


def differs(user: torch.Tensor, expected: torch.Tensor, case: Case, step: str | None = None) -> Said:
    """How ``user`` differs from the ``step`` named ``expected`` (same shape after :func:`views`), in a few words."""
    unit, unit_zh = case.unit
    candidates = views(expected, user.shape) if user.numel() == expected.numel() else []
    if not candidates:
        return Said(f"yours has shape {list(user.shape)}, the expected {list(expected.shape)}",
                    f"你的形状是 {list(user.shape)}，应为 {list(expected.shape)}")  # fmt: skip
    if expected.dtype == torch.bool:
        exp = candidates[0]
        if user.dtype != torch.bool and torch.equal(user.double(), exp.double()):
            dtype = str(user.dtype).removeprefix("torch.")
            return Said(f"the right values as {dtype}, not bool", f"值是对的，但类型是 {dtype}，应为 bool")
        extra, missing = int(((user != 0) & ~exp).sum()), int(((user == 0) & exp).sum())
        if step in case.removing:  # True: removed
            return _joined([Said(f"{extra} {unit} removed that the contract keeps", f"有 {extra} {unit_zh}本应保留，却被删掉")] * bool(extra)
                           + [Said(f"{missing} {unit} kept that the contract removes", f"有 {missing} {unit_zh}本应删掉，却被保留")] * bool(missing))  # fmt: skip
        return _joined([Said(f"{extra} {unit} allowed that the contract masks", f"有 {extra} {unit_zh}本应屏蔽，却被允许")] * bool(extra)
                       + [Said(f"{missing} {unit} masked that the contract allows", f"有 {missing} {unit_zh}本应允许，却被屏蔽")] * bool(missing))  # fmt: skip
    user, candidates = user.double(), [c.double() for c in candidates]
    exp = min(candidates, key=lambda e: _distance(user, e))
    if exp.dim() >= 2 and exp.shape[-1] == exp.shape[-2] and _close(user, exp.transpose(-2, -1)):
        if case.unit == PAIRS:
            return Said("yours is the expected transposed: queries and keys swapped", "你的结果是应为值的转置：query 和 key 弄反了")
        return Said("yours is the expected transposed", "你的结果是应为值的转置")
    if exp.dim() and exp.shape[-1] > 1 and _close(user, exp.flip(-1)):
        return Said("yours is the expected reversed along the last dim (an ascending sort where descending was meant?)",
                    "你的是应为值沿最后一维倒过来的结果（该降序排序的地方用了升序？）")  # fmt: skip
    blown = ~torch.isfinite(user) & torch.isfinite(exp) & ~(user <= MASKED)
    if blown.any():
        n = int(blown.sum())
        return Said(f"{_values(n)} inf or NaN where the expected is finite: the computation overflows here",
                    f"有 {n} 个值是 inf 或 NaN，应为有限值：这一步数值溢出了")  # fmt: skip
    neg_e, neg_u = exp == float("-inf"), user <= MASKED
    if not neg_e.any() and (user == float("-inf")).any():  # no mask here: a -inf is a log of 0
        n = int((user == float("-inf")).sum())
        return Said(f"{_values(n)} -inf where the expected is finite: a log of 0 (it underflows here)",
                    f"有 {n} 个值是 -inf，应为有限值：对 0 取了 log（这一步数值下溢了）")  # fmt: skip
    if (neg_e != neg_u).any():
        missing, extra = int((neg_e & ~neg_u).sum()), int((neg_u & ~neg_e).sum())
        return _joined([Said(f"{missing} masked {unit} are not masked in yours", f"有 {missing} {unit_zh}应被屏蔽，你的没有屏蔽")] * bool(missing)
                       + [Said(f"{extra} allowed {unit} are masked in yours", f"有 {extra} {unit_zh}应保留，你的却屏蔽了")] * bool(extra))  # fmt: skip
    if exp.dim() >= 2 and torch.isfinite(exp).all() and torch.allclose(exp.sum(-1), torch.ones((), dtype=exp.dtype)):
        for dim in range(user.dim() - 1):
            sums = user.sum(dim)
            finite = torch.isfinite(sums)
            if finite.any() and torch.allclose(sums[finite], torch.ones((), dtype=user.dtype)):
                last = "the last dim (keys)" if case.unit == PAIRS else "the last dim"
                last_zh = "最后一维（key）" if case.unit == PAIRS else "最后一维"
                return Said(f"yours sums to 1 over dim {dim - user.dim()}, the expected over {last}",
                            f"你的在第 {dim - user.dim()} 维上和为 1，应在{last_zh}上和为 1")  # fmt: skip
        zero_e, zero_u = exp == 0, user.abs() < 1e-12
        if (exp >= 0).all() and (zero_e & ~zero_u).any():
            n = int((zero_e & ~zero_u).sum())
            return Said(f"{n} {unit} the mask removes get weight in yours", f"有 {n} {unit_zh}应被掩码去掉，你的却分到了权重")
    finite = torch.isfinite(exp) & torch.isfinite(user) & (exp.abs() > 1e-9)
    if finite.any():
        ratio = (user[finite] / exp[finite]).median().item()
        meaning = next(((en, zh) for f, en, zh in case.factors if math.isclose(ratio, f, rel_tol=1e-6)), None)
        several = int(finite.sum()) > 1  # one number is a multiple, and an offset, of any other: only a known factor says more
        if abs(ratio - 1) > 1e-6 and ratio != 0 and (several or meaning) and _close(user[finite], ratio * exp[finite]):
            return Said(f"yours is {ratio:.4g} × the expected" + (f": {meaning[0]}" if meaning else ""),
                        f"你的是应为值的 {ratio:.4g} 倍" + (f"：{meaning[1]}" if meaning else ""), scale=True)  # fmt: skip
        shift = (user[finite] - exp[finite]).median().item()
        if abs(shift) > 1e-9 and several and _close(user[finite], exp[finite] + shift):
            more = "多" if shift > 0 else "少"
            return Said(f"yours is the expected {shift:+.4g} everywhere: an offset",
                        f"你的处处比应为值{more} {abs(shift):.4g}：整体偏移了")  # fmt: skip
    if torch.isfinite(exp).all() and _close(user.reshape(-1).sort().values, exp.reshape(-1).sort().values):
        return Said("the same numbers in another arrangement: a view or reshape where a transpose was needed",
                    "数都对，但排列不对：该用 transpose 的地方用了 view 或 reshape")  # fmt: skip
    diff = (user - exp).abs().nan_to_num(nan=float("inf"))
    where = [int(i) for i in (diff == diff.max()).nonzero()[0]]
    big, mine, want = f"{diff.max().item():.3g}", f"{user[tuple(where)].item():.4g}", f"{exp[tuple(where)].item():.4g}"
    return Said(f"max difference {big} at {where}: yours {mine}, expected {want}", f"最大差 {big}，在 {where}：你的 {mine}，应为 {want}")


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
                     "match": name, "match_zh": case.zh.get(name, name), "status": status})  # fmt: skip

    def diverge(i: int, expected: str | None, said: Said) -> dict:
        rows[i]["status"] = "diverges"
        return {"line": records[i]["line"], "code": code(records[i]["line"]), "expected": expected,
                "expected_zh": case.zh.get(expected, expected), "message": said.en, "message_zh": said.zh}  # fmt: skip

    def named(step: str) -> tuple[str, str]:
        return f"`{step}`", f"`{case.zh.get(step, step)}`"

    for i, r in enumerate(records):
        builtin = builtin_name(SimpleNamespace(__name__=r["op"])) or forbidden.get(r["op"].split(".")[0])
        if builtin:
            return rows, diverge(i, None, Said(f"calls torch's builtin `{builtin}`", f"调用了 torch 的内置实现 `{builtin}`"))
        if r["mutates"] >= 0 and r["mutates"] not in case.updates:
            if r["op"] == "__setitem__":
                return rows, diverge(i, None, Said("assigns into an input (`x[...] = ...`): the caller's tensor is modified",
                                                   "对输入做了切片赋值（`x[...] = ...`）：调用方的张量被改掉了"))  # fmt: skip
            return rows, diverge(i, None, Said(f"`{r['op']}` changes an input in place: the caller's tensor is modified",
                                               f"`{r['op']}` 原地修改了输入：调用方的张量被改掉了"))  # fmt: skip
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
            made = [named(n) for n in sources]
            return rows, diverge(i, None, Said(f"no step of the reference has this value (shape {r['shape']}), made from "
                                               + ", ".join(en for en, _ in made),
                                               f"参考实现里没有哪一步得到这个值（形状 {r['shape']}），它由 "
                                               + "、".join(zh for _, zh in made) + " 算出"))  # fmt: skip
        ahead, distances = [item for item, _ in fitting], [d for _, d in fitting]
        name, expected = ahead[min(range(len(ahead)), key=lambda a: (distances[a], -a))]
        dead = next((j for j in range(i) if matched[j] is not None and matched[j] > inherited and not users[j]
                     and data[j] and names[matched[j]] not in case.returned), None)  # fmt: skip
        if dead is not None:
            step, step_zh = named(names[matched[dead]])
            return rows, diverge(dead, names[matched[dead]], Said(
                f"computes {step}, but its result is never used (an out-of-place op such as masked_fill returns a new tensor)",
                f"算出了 {step_zh}，但结果没有被用到（masked_fill 这类非原地操作返回的是新张量）"))  # fmt: skip
        how = differs(r["tensor"], expected, case, name)
        step, step_zh = named(name)
        message = Said(f"{step} expected here: {how.en}", f"这里应为 {step_zh}：{how.zh}")
        origin = _mask_origin(records, data, i, expected)
        if origin is not None:
            return rows, diverge(origin, name, Said(f"the mask built here is not the contract's: {message.en}",
                                                    f"这里构造的掩码与约定不符：{message.zh}"))  # fmt: skip
        if how.scale and r["op"] not in SCALING:  # a scale left out: it belonged upstream
            source = max((j for j in r["inputs"] if j >= 0 and matched[j] is not None), default=None)
            if source is not None and records[source]["line"] != r["line"] and records[source]["shape"] == r["shape"]:
                after = names[min(matched[source] + 1, len(names) - 1)]
                step, step_zh = named(after)
                return rows, diverge(source, after, Said(f"{step} expected after this line: {how.en}",
                                                         f"这一行之后应得到 {step_zh}：{how.zh}"))  # fmt: skip
        return rows, diverge(i, name, message)
    if not finished:
        return rows, None
    if isinstance(result, (tuple, list)) and result:
        result = result[0]
    final = dict(case.intermediates)[case.output]
    last = next((i for i in reversed(range(n)) if data[i]), None)
    if isinstance(result, torch.Tensor) and last is not None and result.shape != final.shape:
        shapes = list(result.shape), list(final.shape)
        return rows, diverge(last, case.output, Said(f"returns shape {shapes[0]}; the contract's output is {shapes[1]}",
                                                     f"返回的形状是 {shapes[0]}，约定的输出是 {shapes[1]}"))  # fmt: skip
    if isinstance(result, torch.Tensor) and result.is_floating_point() and last is not None and not matches(result, final):
        got = names[matched[last]] if matched[last] is not None else None
        out, out_zh = named(case.output)
        if got and got != case.output:
            what = Said(f"the returned value is {named(got)[0]}, not {out}", f"返回的是 {named(got)[1]}，不是 {out_zh}")
        else:
            how = differs(result, final, case, case.output)
            what = Said(f"{out} expected here: {how.en}", f"这里应为 {out_zh}：{how.zh}")
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
    zh = f"这里抛出了 {raised[1]}" + (f"：{text[raised.end():]}" if text[raised.end():] else "") if raised else f"这里抛出了异常：{text}"
    return {"line": line, "code": code, "expected": None, "message": text, "message_zh": zh}
