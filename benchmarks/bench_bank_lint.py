"""Time of the validator-only rules (`drill bank validate`): keyword checks and near-duplicate prompts.

The near-duplicate scan is the only part that is not linear: pairs are prefix-filtered on their rarer
words before scoring. Timed on the bundled bank, and on banks made by resampling the bundled prompts'
words (same vocabulary and word frequencies, new combinations) at 2k and 5k questions.

Run: python benchmarks/bench_bank_lint.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drill.bank.checks import keyword_problems  # noqa: E402
from drill.bank.duplicates import near_duplicates  # noqa: E402
from drill.bank.load import load_bundled  # noqa: E402


def median_seconds(fn, repeats=3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Prompt:
    def __init__(self, text: str):
        self.prompt = type("Text", (), {"en": text})()


def resampled(questions, n: int, seed: int = 0) -> list:
    rng = random.Random(seed)
    words = [w for q in questions for w in q.prompt.en.split()]
    lengths = [len(q.prompt.en.split()) for q in questions]
    return [_Prompt(" ".join(rng.choices(words, k=rng.choice(lengths)))) for _ in range(n)]


def main() -> None:
    questions = list(load_bundled().questions.values())
    keywords = median_seconds(lambda: [keyword_problems(q) for q in questions])
    print(f"{len(questions):>5} bundled questions: keyword rules {keywords:.3f} s, near-duplicates {median_seconds(lambda: near_duplicates(questions)):.3f} s")
    for n in (2000, 5000):
        fake = resampled(questions, n)
        print(f"{n:>5} resampled prompts: near-duplicates {median_seconds(lambda: near_duplicates(fake), repeats=1):.2f} s")


if __name__ == "__main__":
    main()
