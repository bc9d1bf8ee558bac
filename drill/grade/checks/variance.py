"""The one-pass variance E[x²] - E[x]² in a LayerNorm, wherever one sits (the layernorm task, the blocks).

It equals the two-pass variance in float64, so no probe tells them apart; float32 rows with a large common
offset do, where E[x²] and E[x]² are huge and nearly equal and cancel. The contrast is the same rows shifted to
mean ~0 (a LayerNorm is shift-invariant): a reference that explains the user's centred rows (the correct one,
or another mistake the task models) but not the offset rows shows the cancellation, so the bug is still named
when a second mistake makes both differ from the correct reference.
"""

from __future__ import annotations

from drill.grade.checks.compare import against_truth, first_nonfinite
from drill.grade.context import outcome
from drill.grade.report import Check
from drill.text.messages import Ev

CODE = "layernorm-one-pass-variance"
CENTRED = Ev("the same rows shifted to mean ~0")
LOST = 1e-2  # digits lost, not rounding: a two-pass LayerNorm's float32 error at the offset stays far below


def one_pass_verdict(label: str, out, centred_out, references) -> Check:
    """``out`` / ``centred_out``: the user's float32 outputs on the offset rows and on the same rows centred;
    ``references``: [(code, ref)], the correct one first (code None), ``ref(centred) -> (truth, same)``."""
    truth, same = references[0][1](False)
    result = against_truth([(label, out, truth, same)])
    if result.status == "pass":
        return result
    for code, ref in references:
        if against_truth([(CENTRED, centred_out, *ref(True))]).status != "pass":
            continue
        truth, same = ref(False)
        bad = first_nonfinite(out, truth)
        if bad is None and (out.double() - truth).abs().max().item() <= LOST:
            return result  # what explains the centred rows explains these too: no digits lost
        what = Ev("a non-finite output at {at}", at=list(bad)) if bad is not None else result.message
        if code is None:
            why = Ev("{what}, while {centred} pass: the variance loses its digits to cancellation", what=what, centred=CENTRED)
        else:
            why = Ev("{what}, while {centred} are explained by {code} alone: the variance loses its digits to cancellation",
                     what=what, centred=CENTRED, code=code)  # fmt: skip
        return outcome("fail", why, CODE)
    return result
