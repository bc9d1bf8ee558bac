"""The judge process: ``python -m drill.grade.judge PARENT_PID [THREADS]``.

Trusted: it imports torch and drill.grade, never the user's file. It builds every input,
computes every reference, applies the tolerance rule, diagnoses and writes the report; the
user's code runs in a user side forked per grade from this process's zygote
(drill.grade.remote), itself forked from this process right after ``import torch``
(drill.grade.spawn). Requests arrive one JSON object per line on stdin (a grade, or
``"kind": "bench"``); events (ready, start, check, report, bench, usage_error, internal_error)
go back one per line on the stdout it was started with. Both are moved off 0 and 1 at once
(stray prints go to stderr), no descriptor number is on the command line, and the process is
non-dumpable, so the user side cannot reach either channel through /proc. It serves until REQUEST_FD closes, so the whiteboard keeps
one judge and one zygote warm for a whole session.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import traceback

from drill.grade import spawn
from drill.grade.user import procs, sandbox


def serve(requests, results, threads: int | None, started: tuple[spawn.Forked, socket.socket]) -> None:
    """``started``: the zygote forked at start-up, still warming up while this process imports the grader."""

    def emit(event: dict) -> None:
        results.write(json.dumps(event) + "\n")
        results.flush()

    import torch

    from drill.errors import DrillError
    from drill.grade import remote
    from drill.grade.battery import run_battery

    if threads:
        torch.set_num_threads(threads)

    remote.zygote(threads, started)
    emit({"event": "ready"})
    for line in requests:
        request = json.loads(line)
        try:
            if request.pop("kind", "grade") == "bench":
                from drill.grade.bench import run_bench

                emit({"event": "bench", "result": run_bench(**request, threads=threads)})
                continue
            report = run_battery(**request, emit=emit)
        except DrillError as exc:
            emit({"event": "usage_error", "message": str(exc), "wire": exc.message.to_wire(), "exit_code": int(exc.exit_code)})
        except remote.InternalError as exc:
            emit({"event": "internal_error", "message": str(exc), "traceback": exc.detail or traceback.format_exc()})
        except Exception as exc:  # noqa: BLE001 - a fault of drill's grader, never blamed on the user's file
            emit({"event": "internal_error", "message": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
        else:
            emit({"event": "report", "report": report.to_wire()})


def main(argv: list[str]) -> None:
    parent = int(argv[0])
    threads = int(argv[1]) if len(argv) > 1 and argv[1] != "0" else None
    preload = [name for name in argv[2].split(",") if name] if len(argv) > 2 else []
    procs.die_with_parent(parent)
    sandbox.non_dumpable()
    request_fd, result_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    subreaper = procs.become_subreaper()  # if the user kills the zygote, what it left comes here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is drill's to handle
    code = 0
    try:
        import torch  # noqa: F401 - the one import of torch of this judge and its zygote

        started = spawn.fork_zygote(preload)  # before any file object or grading code exists here
        from drill.grade import remote

        remote.REAP_ORPHANS = subreaper
        with os.fdopen(request_fd, encoding="utf-8") as requests, os.fdopen(result_fd, "w", encoding="utf-8") as results:
            serve(requests, results, threads, started)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        from drill.grade import remote

        remote.close_zygotes()
        procs.kill_children()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # no interpreter teardown: unloading torch takes ~1 s that nobody waits for


if __name__ == "__main__":
    main(sys.argv[1:])
