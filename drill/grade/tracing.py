"""``drill grade --trace``: run the user's code once under the op recorder and say where it leaves the reference.

A task declares its trace in ``drill/grade/tasks/<task>/intermediates.py``: ``case(ctx)`` returns a
:class:`drill.grade.trace_match.Case` (what to call on a small fixed float64 input whose sizes are
pairwise different, and the reference's named intermediates for it), and optionally ``stress(ctx, failed)``:
inputs where bugs show that the small one hides. The call runs on the user side (drill.grade.user.trace);
the matching here. Also drawn from the same call: the attention weights, expected vs theirs, when the
user returns them and they differ.
"""

from __future__ import annotations

import importlib
import importlib.util
import math

import torch

from drill.grade.context import WrongShape
from drill.grade.remote import Abort, UserCodeError
from drill.grade.trace_match import analyse, crash, matches
from drill.grade.trace_values import ValueCase, trace_values
from drill.grade.user import wire
from drill.text.messages import Ev

HEAT_T = 12  # the largest T drawn
LARGE_PEAK = 2e3  # the largest |scaled score| of a large-scores stress input: exp overflows float64 unless the max is subtracted
LARGE_SCORES = Ev("scores around 1e3")  # that input's label


def fixed_mask(shape, gen: torch.Generator) -> torch.Tensor:
    """A bool mask with masked and allowed keys in every query row."""
    mask = torch.rand(shape, generator=gen) < 0.5
    t = shape[-1]
    mask[..., 0] = True
    mask[..., t - 1] = False
    return mask


def declared(task_name: str):
    """The task's intermediates module, or None where it declares none yet."""
    name = f"drill.grade.tasks.{task_name}.intermediates"
    return importlib.import_module(name) if importlib.util.find_spec(name) else None


def run_trace(task_name: str, ctx, *, rows: bool, failed: frozenset[str] = frozenset()) -> dict:
    """{"first_divergence": ..., "pictures": [...]} and, with ``rows``, "trace"; {} where there is no trace to take.

    ``failed``: the ids of the grade's failed checks. When the fixed input shows nothing wrong but checks
    failed, the task's stress inputs (``stress(ctx, failed)`` in its module: large logits, a third call...)
    are traced too, and the first that diverges is reported, with what is special about its input.
    """
    module = declared(task_name)
    if module is None:
        return {}
    try:
        lines = ctx.path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    try:
        cases = module.case(ctx)  # may call the user's code untraced first (a cache's first call)
    except UserCodeError as exc:
        found = crash(str(exc), ctx.path.name, lines)
        return {"first_divergence": found, "pictures": [], **({"trace": []} if rows else {})} if found else {}
    except (NoTrace, WrongShape, Abort, RuntimeError, ValueError, TypeError, IndexError):
        return {}
    from drill.grade.tasks import TASKS

    forbidden = getattr(TASKS[task_name].load(), "forbidden", None) or {}  # F.layer_norm in layernorm: named on its line
    found = trace_cases(ctx, cases if isinstance(cases, list) else [cases], lines, forbidden)  # one per layout (rope)
    if found and found["first_divergence"] is None and failed and hasattr(module, "stress"):
        try:
            stressed = module.stress(ctx, set(failed))
        except (NoTrace, WrongShape, UserCodeError, Abort, RuntimeError, ValueError, TypeError, IndexError):
            stressed = []
        for extra in stressed:
            again = trace_cases(ctx, [extra], lines, forbidden)
            divergence = again.get("first_divergence")
            if divergence is None:
                continue
            if "input" not in divergence:  # a value trace labels its own
                said = Ev("on {input}: {message}", input=extra.label, message=divergence["message"])
                divergence.update(input=extra.label, message=said)
            found = again
            break
    if not found:
        return {}
    if not rows:
        found.pop("trace", None)
    return found


def trace_cases(ctx, cases: list, lines: list[str], forbidden: dict[str, str] | None = None) -> dict:
    """Trace one input (the first case; the others are the same input in another accepted layout)."""
    if isinstance(cases[0], ValueCase):  # plain-Python code (bpe, lr_schedule, beam_search): its values, call by call
        return trace_values(ctx, cases, lines)
    forbidden = forbidden or {}
    case = cases[0]
    try:
        result, records, raised = ctx.user.trace(case.target, case.args, case.kwargs)
    except UserCodeError as exc:
        found = crash(str(exc), ctx.path.name, lines)
        return {"first_divergence": found, "pictures": [], "trace": []} if found else {}
    except (NoTrace, WrongShape, Abort, RuntimeError, ValueError, TypeError, IndexError):
        return {}
    sent: list[torch.Tensor] = []
    wire.encode((tuple(case.args), dict(case.kwargs)), collect=sent)
    leaves = [t.is_floating_point() or case.all_data for t in sent]
    returned = result[0] if isinstance(result, (tuple, list)) and result else result
    matching = [c for c in cases if isinstance(returned, torch.Tensor) and matches(returned, dict(c.intermediates)[c.output])]
    if matching or len(cases) == 1:
        case = (matching or cases)[0]
    else:  # a wrong file: the layout it follows furthest
        case = max(cases, key=lambda c: furthest(analyse(records, c, result, lines, leaves, raised is None, forbidden)))
    trace, divergence = analyse(records, case, result, lines, leaves, raised is None, forbidden)
    if raised is not None and divergence is None:  # nothing went wrong before the exception: the exception is it
        divergence = crash(raised, ctx.path.name, lines)
    return {"first_divergence": divergence, "pictures": weight_pictures(case, result), "trace": trace}


def furthest(found) -> int:
    """How far a trace got before it diverged (for choosing between layouts)."""
    rows, divergence = found
    return len(rows) + 1 if divergence is None else next(i for i, r in enumerate(rows) if r["status"] == "diverges")


def weight_pictures(case, result) -> list[dict]:
    """The attention weights of sample 0, head 0, expected vs theirs, when the user returned them and they differ."""
    steps = dict(case.intermediates)
    if "weights" not in steps or not isinstance(result, (tuple, list)) or len(result) < 2:
        return []
    theirs, expected = result[1], steps["weights"]
    if not isinstance(theirs, torch.Tensor) or theirs.shape != expected.shape or expected.shape[-1] > HEAT_T:
        return []
    if torch.allclose(theirs.double(), expected, atol=1e-6):
        return []
    pick = (0,) * (expected.dim() - 2)
    return [{"kind": "weights", "title": Ev("attention weights, sample 0, head 0"),
             "expected": expected[pick].tolist(), "theirs": theirs[pick].double().nan_to_num(nan=-1.0).tolist()}]  # fmt: skip


class NoTrace(Exception):
    """The task cannot build its trace for this file (e.g. no recognised projection layout)."""


def attention_module_case(task, ctx, *, mask_arg: bool, b: int = 2, t: int = 5, h: int = 3, hd: int = 4, large: bool = False):
    """The trace of a self-attention module (mha, causal): intermediates from the user's own weights.
    ``large``: the stress input, x scaled so that the scaled scores reach ±LARGE_PEAK, whatever the weights' init."""
    from drill.grade.checks.module import self_attention_args
    from drill.grade.reference import causal_mask, merge_heads, split_heads
    from drill.grade.trace_match import PAIRS, Case

    built = task.build(ctx, h * hd, h, torch.float64)
    if built.layout is None:
        raise NoTrace("no recognised projection layout")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(b, t, h * hd, generator=gen, dtype=torch.float64)
    mask = fixed_mask((b, 1, t, t), gen) if mask_arg else causal_mask(t)
    params = built.params(torch.float64)
    q, k, v = (split_heads(p, h, hd) for p in built.layout.project_qkv(x, params))
    if large:  # q and k grow with x (their biases aside), the scores with its square
        x = x * math.sqrt(LARGE_PEAK * math.sqrt(hd) / (q @ k.transpose(-2, -1)).abs().max().item())
        q, k, v = (split_heads(p, h, hd) for p in built.layout.project_qkv(x, params))
    scores = q @ k.transpose(-2, -1)
    scaled = scores / math.sqrt(hd)
    masked = scaled.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    attended = weights @ v
    merged = merge_heads(attended)
    steps = [("x", x), ("q", q), ("k", k), ("v", v), ("scores", scores), ("scaled", scaled), ("masked", masked),
             ("weights", weights), ("weights·v", attended), (Ev("merged heads"), merged),
             ("output", built.layout.project_out(merged, params))]  # fmt: skip
    args = self_attention_args(ctx, x, mask if mask_arg else None)
    return Case(built.module, args, steps, factors=scale_factors(hd, h * hd), unit=PAIRS, label=LARGE_SCORES if large else None)


def scale_factors(hd: int, d_model: int | None = None) -> list[tuple[float, Ev]]:
    """What a wrong scale looks like as yours / expected."""
    found = [(math.sqrt(hd), Ev("never scaled by 1/√d")), (1 / math.sqrt(hd), Ev("divided by d instead of √d")),
             (1 / hd, Ev("scaled by 1/√d twice"))]  # fmt: skip
    if d_model:
        found.append((math.sqrt(hd / d_model), Ev("scaled by 1/√d_model instead of 1/√head_dim")))
    return found


def leak_pictures(task_name: str, ctx, failed: set[str]) -> list[dict]:
    """The task's leak pictures for the mask-leak checks that failed (``leaks(ctx, failed)`` in its module)."""
    module = declared(task_name)
    if module is None or not hasattr(module, "leaks"):
        return []
    try:
        return module.leaks(ctx, failed)
    except (NoTrace, WrongShape, UserCodeError, Abort, RuntimeError, ValueError, TypeError, IndexError):
        return []


def module_leaks(task, ctx, failed: set[str], *, mask_arg: bool) -> list[dict]:
    """Leak pictures of a self-attention module: the causal pattern, and padding per sample (mha)."""
    from drill.grade import leak
    from drill.grade.checks.common import padding_mask
    from drill.grade.reference import causal_mask

    built = task.build(ctx, 12, 3, torch.float64)
    gen = torch.Generator().manual_seed(13)
    found = []
    if failed & {"mask-leak.future", "mask-leak.jacobian"}:
        x = torch.randn(1, 8, 12, generator=gen, dtype=torch.float64)
        mask = causal_mask(8) if mask_arg else None
        seen = leak.through(lambda z: task.forward(ctx, built.module, z, mask), x, leak.last_dims)[0]
        found.append(leak.picture(Ev("causal: may query i see key j?"), causal_mask(8), seen))
    if mask_arg and "mask-leak.padding" in failed:
        lengths, t = (5, 1, 3), 5
        x = torch.randn(3, t, 12, generator=gen, dtype=torch.float64)
        mask = padding_mask(lengths, t, ctx.device)
        seen = leak.through(lambda z: task.forward(ctx, built.module, z, mask), x, leak.last_dims)
        for b, n in enumerate(lengths):
            allowed = (torch.arange(t)[None, :] < n) | torch.eye(t, dtype=torch.bool)  # a padded row still sees itself
            found.append(leak.picture(Ev("padding, sample {b} (length {n})", b=b, n=n), allowed, seen[b]))
    return found
