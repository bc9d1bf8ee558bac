"""What ``drill review --optimize`` says: how many reviews are still needed, or what was fitted."""

from __future__ import annotations

from drill.practice.optimize import MIN_REVIEWS, Fit
from drill.views.console import out

WORDS = {
    "needed": ("Not enough history to fit FSRS to you yet: {n} of the {min} reviews needed (answers a day or more after the "
               "question's previous answer). {left} more to go; until then FSRS's defaults are used.",
               "历史还不够，暂时无法按你的记忆拟合 FSRS 参数：需要 {min} 次复习（距同一题上次作答至少一天的作答），"
               "目前有 {n} 次，还差 {left} 次；在此之前使用 FSRS 默认参数。"),
    "fitted": ("FSRS parameters fitted to your {n} reviews and stored (drill config get fsrs-parameters); "
               "every question's schedule now uses them.",
               "已按你的 {n} 次复习拟合 FSRS 参数并保存（drill config get fsrs-parameters）；之后每道题的复习计划都用这组参数。"),
}


def print_fit(fit: Fit, lang: str) -> None:
    zh = lang == "zh"
    if fit.parameters is None:
        out.print(WORDS["needed"][zh].format(n=fit.reviews, min=MIN_REVIEWS, left=fit.needed))
    else:
        out.print(WORDS["fitted"][zh].format(n=fit.reviews))
