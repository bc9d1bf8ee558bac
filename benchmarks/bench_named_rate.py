"""Named rate (issue 26): how often the grader names the bug of a file written the way candidates write it.

The corpus (tests/whiteboard/impls/corpus/<task>/) was written from each task's contract only, not from its
mutants or hypotheses, so it measures the grader on forms it was not built around. A file
``<code>__<form>.py`` holds one bug, ``<code1>+<code2>__<form>.py`` two, ``none__<form>.py`` a bug that no
code fits. Every file is graded (run_battery, task from the folder) and counted as
  caught: the grade fails;  named: every expected code is among the diagnosis codes;
  exact: the diagnosis codes are exactly the expected ones;  false codes: codes reported that were not expected;
  possibly: named once the report's "possibly" candidates (never counted by drill stats) are added too.
Run: python benchmarks/bench_named_rate.py [--corpus DIR] [--tasks sdpa,mha] [--json]. Prints per task and
overall, then the misses. PYTHONPATH picks the drill under test (an older checkout measures "before").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH, so another checkout's drill is the one graded

from drill.grade.battery import run_battery  # noqa: E402

CORPUS = ROOT / "tests" / "whiteboard" / "impls" / "corpus"


def expected_codes(path: Path) -> list[str]:
    """The codes a corpus file's name promises: ``a+b__form.py`` -> [a, b]; ``none__form.py`` -> []."""
    head = path.stem.split("__", 1)[0]
    return [] if head == "none" else head.split("+")


def grade(path: Path, task: str) -> dict:
    """One file's row: what was expected, what the grade said."""
    expected = expected_codes(path)
    try:
        report = run_battery(path, task=task, device="cpu")
        passed, codes, error = report.passed, sorted({d.code for d in report.diagnosis}), ""
        possibly = sorted({d.code for d in getattr(report, "candidates", [])} - set(codes))  # older drill: none
    except Exception as exc:  # a grade that cannot start is a miss, not a crash of the benchmark
        passed, codes, possibly, error = False, [], [], f"{type(exc).__name__}: {exc}"
    caught = not passed
    return {"task": task, "file": path.name, "pair": len(expected) > 1, "expected": expected, "codes": codes,
            "possibly": possibly, "caught": caught, "named": caught and set(expected) <= set(codes),
            "possibly_named": caught and set(expected) <= set(codes) | set(possibly),
            "exact": caught and set(codes) == set(expected), "false": sorted(set(codes) - set(expected)),
            **({"error": error} if error else {})}  # fmt: skip


def tally(rows: list[dict]) -> dict:
    return {"files": len(rows), "caught": sum(r["caught"] for r in rows), "named": sum(r["named"] for r in rows),
            "exact": sum(r["exact"] for r in rows), "false_codes": sum(bool(r["false"]) for r in rows),
            "possibly": sum(r["possibly_named"] for r in rows)}  # fmt: skip


def got(row: dict) -> str:
    return f"{row['codes'] or '-'}" + (f", possibly {row['possibly']}" if row["possibly"] else "")


def summary(rows: list[dict]) -> dict:
    tasks = sorted({r["task"] for r in rows})
    return {"tasks": {t: tally([r for r in rows if r["task"] == t]) for t in tasks},
            "single": tally([r for r in rows if not r["pair"]]), "pairs": tally([r for r in rows if r["pair"]]),
            "overall": tally(rows),
            "not_caught": [f"{r['task']}/{r['file']}" for r in rows if not r["caught"]],
            "not_named": [f"{r['task']}/{r['file']}: got {got(r)}" for r in rows if r["caught"] and not r["named"]],
            "false_codes": [f"{r['task']}/{r['file']}: {r['false']}" for r in rows if r["false"]],
            "rows": rows}  # fmt: skip


def line(name: str, t: dict) -> str:
    pct = lambda k: f"{t[k]:>3} ({100 * t[k] / t['files']:5.1f}%)" if t["files"] else "  -"  # noqa: E731
    return f"{name:<22} {t['files']:>5}  {pct('caught')}  {pct('named')}  {pct('exact')}  {pct('false_codes')}  {pct('possibly')}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of <task>/<codes>__<form>.py files")
    parser.add_argument("--tasks", default="", help="comma-separated task folders to grade (default: all)")
    parser.add_argument("--json", action="store_true", help="print the summary and every row as JSON")
    args = parser.parse_args()
    wanted = set(filter(None, args.tasks.split(",")))
    folders = sorted(p for p in args.corpus.iterdir() if p.is_dir() and (not wanted or p.name in wanted))
    files = [(path, folder.name) for folder in folders for path in sorted(folder.glob("*.py"))]
    rows = []
    for n, (path, task) in enumerate(files, 1):
        rows.append(grade(path, task))
        print(f"\r{n}/{len(files)} {task}/{path.name}"[:100].ljust(100), end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    result = summary(rows)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    import drill

    print(f"drill from {Path(drill.__file__).parent}")
    print(f"{'task':<22} {'files':>5}  {'caught':<12}  {'named':<12}  {'exact':<12}  {'false codes':<12}  possibly")
    for task, t in result["tasks"].items():
        print(line(task, t))
    for name in ("single", "pairs", "overall"):
        print(line(name.upper(), result[name]))
    for name in ("not_caught", "not_named", "false_codes"):
        print(f"\n{name.replace('_', ' ')} ({len(result[name])}):")
        print("\n".join(f"  {item}" for item in result[name]) or "  -")
    return 0


if __name__ == "__main__":
    sys.exit(main())
