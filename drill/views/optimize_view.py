"""What ``drill review --optimize`` says: how many reviews are still needed, or what was fitted."""

from __future__ import annotations

from drill.practice.optimize import MIN_REVIEWS, Fit
from drill.text.i18n import text
from drill.text.messages import Msg
from drill.views.console import out

WORDS = {
    "needed": Msg("Not enough history to fit FSRS to you yet: {n} of the {min} reviews needed (answers a day or more after the "
                  "question's previous answer). {left} more to go; until then FSRS's defaults are used."),
    "fitted": Msg("FSRS parameters fitted to your {n} reviews and stored (drill config get fsrs-parameters); "
                  "every question's schedule now uses them."),
}


def print_fit(fit: Fit, lang: str) -> None:
    if fit.parameters is None:
        out.print(text(WORDS["needed"], lang, n=fit.reviews, min=MIN_REVIEWS, left=fit.needed))
    else:
        out.print(text(WORDS["fitted"], lang, n=fit.reviews))
