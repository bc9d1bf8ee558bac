"""A module task whose heads are drawn too: every other numerical check of the module engine builds 3 heads of 4
(B and T drawn), where a scale or a reshape hard-coded to head_dim 4 is right."""

from __future__ import annotations

from functools import partial

import torch

from drill.grade.checks.compare import against_truth
from drill.grade.checks.module import BASE, NO_LAYOUT, ModuleTask
from drill.grade.context import CheckDef, Context, outcome
from drill.text.messages import Ev


def drawn_heads_message(message: str, b: int, h: int, hd: int, t: int | None = None) -> Ev:
    """A check's message prefixed with the batch, heads and head_dim it drew, so ``--seed N`` finds them again."""
    heads = Ev("{h} heads of {hd}", h=h, hd=hd) if h > 1 else Ev("{h} head of {hd}", h=h, hd=hd)
    if t is None:
        return Ev("B={b}, {heads} (drawn from the seed): {what}", b=b, heads=heads, what=message)
    return Ev("B={b}, T={t}, {heads} (drawn from the seed): {what}", b=b, t=t, heads=heads, what=message)


class DrawnHeadsTask(ModuleTask):
    """The module battery plus ``numerical.drawn``: B, T, the number of heads and head_dim drawn from the seed."""

    def drawn_check(self, ctx: Context):
        b, t, h, hd = ctx.sizes(320, (1, 4), (2, 12), (1, 6), (2, 9), avoid=BASE[2:])
        built = self.build(ctx, h * hd, h)
        if built.layout is None:
            return outcome("skip", NO_LAYOUT)
        x, mask = self.inputs(ctx, (b, t, h, hd), 130, torch.float64)
        pairs = []
        for m in (None, mask) if mask is not None else (None,):
            out = self.forward(ctx, built.module, x.float(), m)
            truth, same = (self.reference(built, x, m, dt) for dt in (torch.float64, torch.float32))
            pairs.append((Ev("output") if m is None else Ev("masked output"), out, truth, same))
        result = against_truth(pairs)
        result.message = drawn_heads_message(result.message, b, h, hd, t)
        return result

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = super().checks(ctx)
        at = max(i for i, d in enumerate(defs) if d.category == "numerical") + 1
        return defs[:at] + [CheckDef("numerical.drawn", "numerical", partial(self.drawn_check, ctx))] + defs[at:]
