"""Load + validate time of generated banks of 1k and 10k questions (issue: < 1 s at 10k, linear).

Full validation is timed with the compiled-bank cache off (as `drill bank validate` runs);
the cached load of unchanged files is printed beside it.

Run: python benchmarks/bench_bank_load.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drill.bank.load import load_paths  # noqa: E402

TYPES = ("open", "choice", "numeric", "shape")


def question(i: int) -> dict:
    """A realistic question: bilingual paragraphs, three key points, a follow-up."""
    kind = TYPES[i % 4]
    q = {
        "id": f"gen-{i:05d}",
        "level": f"L{i % 3 + 1}",
        "type": kind,
        "prompt": {"en": f"Question {i}: why is attention scaled by sqrt(d_k)? " * 2, "zh": f"第 {i} 题：为什么注意力要除以 sqrt(d_k)？" * 2},
        "answer": {
            "en": "The dot product of two unit-variance vectors has variance d_k, so logits grow and softmax saturates. " * 4,
            "zh": "两个方差为 1 的向量点积方差为 d_k，logits 变大会让 softmax 饱和，梯度消失。" * 4,
        },
        "key_points": [
            {"en": f"point {j} about variance", "zh": f"要点 {j}：方差", "keywords": {"en": ["variance", "d_k"], "zh": ["方差"]}}
            for j in range(3)
        ],
        "tags": ["generated"],
        "follow_ups": [f"gen-{i + 1:05d}"] if i % 4 == 0 else [],
        "pitfalls": [{"en": "Saying it is only for precision.", "zh": "只说是为了精度。"}],
    }
    if kind == "choice":
        q |= {"choices": [{"en": f"option {c}", "zh": f"选项 {c}"} for c in range(4)], "correct": 1}
    elif kind == "numeric":
        q |= {"value": 4.0, "tolerance": 0.01, "unit": "GiB"}
    elif kind == "shape":
        q |= {"shape": "[B, H, T, T]"}
    return q


def write_bank(folder: Path, n: int, per_file: int = 250) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, n, per_file):
        qs = [question(i) for i in range(start, min(n, start + per_file))]
        if qs[-1]["follow_ups"] and int(qs[-1]["follow_ups"][0][4:]) >= n:
            qs[-1]["follow_ups"] = []
        doc = {"format_version": 1, "topic": "generated", "questions": qs}
        (folder / f"bank-{start // per_file:03d}.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return folder


def time_load(folder: Path, use_cache: bool, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        bank = load_paths([folder], use_cache=use_cache)
        times.append(time.perf_counter() - t0)
    assert bank.questions, "nothing loaded"
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DRILL_HOME"] = str(Path(tmp) / "home")  # the compiled-bank cache goes here
        results = {}
        for n in (1_000, 10_000):
            folder = write_bank(Path(tmp) / str(n), n)
            size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
            results[n] = time_load(folder, use_cache=False)
            load_paths([folder])  # fill the cache
            cached = time_load(folder, use_cache=True)
            print(f"{n:>6} questions ({size:.1f} MiB of YAML): median load+validate {results[n]:.3f} s; unchanged files from the cache {cached:.3f} s")
        print(f"ratio 10k/1k (full validation): {results[10_000] / results[1_000]:.1f}x (linear = 10x)")


if __name__ == "__main__":
    main()
