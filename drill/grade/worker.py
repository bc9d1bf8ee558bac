"""The child process that runs the user's code: ``python -m drill.grade.worker REQUEST_FD RESULT_FD``.

Requests arrive one JSON object per line on REQUEST_FD (a grade, or ``"kind": "bench"`` for
``--bench``); events (ready, start, check, report, bench, usage_error) go back one per line on RESULT_FD. stdout/stderr belong to the user's prints,
so nothing they print can corrupt the results. The worker serves requests until REQUEST_FD
closes, so a caller may keep it warm and grade again without paying for ``import torch``.
"""

from __future__ import annotations

import json
import os
import sys

from drill.errors import DrillError


def serve(requests, results) -> None:
    def emit(event: dict) -> None:
        results.write(json.dumps(event) + "\n")
        results.flush()

    from drill.grade.battery import run_battery
    from drill.grade.tasks import TASKS

    for spec in TASKS.values():
        spec.load()  # pay every import before "ready", so the time limit is the user's alone
    emit({"event": "ready"})
    for line in requests:
        request = json.loads(line)
        try:
            if request.pop("kind", "grade") == "bench":
                from drill.grade.bench import run_bench

                emit({"event": "bench", "result": run_bench(**request)})
                continue
            report = run_battery(**request, emit=emit)
        except DrillError as exc:
            emit({"event": "usage_error", "message": str(exc), "exit_code": int(exc.exit_code)})
        else:
            emit({"event": "report", "report": report.to_wire()})


def main(argv: list[str]) -> None:
    request_fd, result_fd = (int(a) for a in argv)
    with os.fdopen(request_fd, encoding="utf-8") as requests, os.fdopen(result_fd, "w", encoding="utf-8") as results:
        serve(requests, results)


if __name__ == "__main__":
    main(sys.argv[1:])
