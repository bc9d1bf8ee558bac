"""Hostile files that reach outside the user side: drill's processes through /proc, its history on
disk, its judge by signal, its result channel. Each ends as a failed grade in the user's name, and
the sandbox's layers are tried one by one, as root and as an unprivileged user, so that the tests
say which attack each layer stops and which would still succeed where a layer is missing."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import pytest

from drill.grade.isolation import Malformed, Worker, parse_event
from drill.grade.report import Report
from drill.grade.run import make_request
from drill.grade.user import sandbox

from whiteboard_impls import HOSTILE, IMPLS

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("sandbox_probe.py")
AVAILABLE = dict(sandbox.available())
ATTACKS = ("write DRILL_HOME", "write a drill process's pipe through /proc", "open a drill process's /proc/PID/mem", "signal a drill process")
SIGNALS_SCOPED = AVAILABLE["landlock signals"] is None
needs_landlock = pytest.mark.skipif(AVAILABLE["landlock writes"] is not None, reason=str(AVAILABLE["landlock writes"]))


def probe(*layers: str, user: str | None = None) -> dict:
    command = [sys.executable, "-B", str(PROBE), *layers]
    if user:
        command = ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--clear-groups", "/usr/bin/python3", "-B", str(PROBE), *layers]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd="/", env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def unprivileged_user() -> str | None:
    """A user the tests can become (root, setpriv, a system Python that user may run), else None."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.access("/usr/bin/python3", os.X_OK):
        return None
    done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", "import os"],
                          capture_output=True, cwd="/")  # fmt: skip
    return "nobody" if done.returncode == 0 else None


def unprivileged_drill(user: str | None) -> tuple[list[str], str | None]:
    """(the start of a command that runs ``env -i`` as ``user``, None) or ([], why not). This venv's interpreter lives under
    /root (mode 700), out of an unprivileged user's reach: the system Python runs drill instead when it is the
    same minor version (the ABI torch was built for) and the venv's packages are readable to that user."""
    if user is None:
        return [], "no unprivileged user to become here (needs root, setpriv and a system Python)"
    system = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True)
    if system.stdout.split() != [str(n) for n in sys.version_info[:2]]:
        return [], f"/usr/bin/python3 is {system.stdout.strip() or 'missing'}, not this venv's {sys.version_info[0]} {sys.version_info[1]}: torch's build would not load"
    path = os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])
    command = ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--clear-groups", "env", "-i", "PATH=/usr/bin:/bin",
               f"PYTHONPATH={path}"]  # fmt: skip - then NAME=value pairs, then /usr/bin/python3
    done = subprocess.run([*command, "/usr/bin/python3", "-c", "import torch"], capture_output=True, text=True, cwd="/")
    if done.returncode:
        return [], f"{user} cannot import torch from this venv's packages: {done.stderr.strip().splitlines()[-1:]}"
    return command, None


def test_without_the_sandbox_every_attack_gets_through():
    """The probe sees an attack when it works: nothing is stopped when no layer is used."""
    assert probe("none")["attacks"] == dict.fromkeys(ATTACKS, True)


def test_the_full_sandbox_stops_what_this_kernel_allows():
    found = probe("dumpable", "userns", "landlock")
    assert found["confined"] == {"user namespace": AVAILABLE["user namespace"], "landlock": AVAILABLE["landlock writes"]}
    if AVAILABLE["landlock writes"] is None:
        assert not found["attacks"]["write DRILL_HOME"]
        assert not found["attacks"]["open a drill process's /proc/PID/mem"]
    if AVAILABLE["user namespace"] is None or AVAILABLE["landlock writes"] is None:
        assert not found["attacks"]["write a drill process's pipe through /proc"]
    assert found["attacks"]["signal a drill process"] == (not SIGNALS_SCOPED)


def test_as_root_a_user_namespace_closes_proc_but_not_the_disk():
    if os.geteuid() != 0 or AVAILABLE["user namespace"] is not None:
        pytest.skip("needs root and unprivileged user namespaces")
    found = probe("dumpable", "userns")["attacks"]
    assert found == {"write DRILL_HOME": True, "write a drill process's pipe through /proc": False,
                     "open a drill process's /proc/PID/mem": False, "signal a drill process": True}  # fmt: skip


def test_as_an_unprivileged_user_non_dumpable_alone_closes_proc():
    user = unprivileged_user()
    if user is None:
        pytest.skip("no unprivileged user to become here (needs root, setpriv and a system Python)")
    assert probe("none", user=user)["attacks"] == dict.fromkeys(ATTACKS, True)  # the same user reaches it all
    found = probe("dumpable", user=user)["attacks"]
    assert not found["write a drill process's pipe through /proc"] and not found["open a drill process's /proc/PID/mem"]
    full = probe("dumpable", "userns", "landlock", user=user)["attacks"]
    assert not full["write DRILL_HOME"] or AVAILABLE["landlock writes"] is not None
    assert full["signal a drill process"] == (not SIGNALS_SCOPED)


# --- whole grades ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judge():
    with Worker(threads=1) as worker:
        yield worker


def failing(report: Report):
    assert not report.passed
    return next(c for c in report.checks if c.status in ("fail", "error"))


def test_a_report_forged_through_proc_never_reaches_drill(judge):
    report = judge.grade(make_request(HOSTILE / "forge_through_proc.py", device="cpu"), 60)
    check = failing(report)
    assert check.id.startswith("shape."), (check.id, check.message)  # its wrong answer, not a forged or broken channel
    assert judge.grade(make_request(IMPLS / "correct" / "sdpa_matmul.py", device="cpu"), 60).passed  # the channel is intact


@pytest.mark.parametrize("name", ["kill_judge", "stop_judge", "kill_parent"])
def test_signalling_drill_fails_in_the_users_name(name):
    with Worker(threads=1) as worker:
        started = time.monotonic()
        check = failing(worker.grade(make_request(HOSTILE / f"{name}.py", device="cpu"), 60))
        if SIGNALS_SCOPED:  # Landlock refuses the signal: the user's own line raised
            assert check.id.startswith("shape.") and "PermissionError" in check.message and f"{name}.py:" in check.message
        elif name == "kill_parent":
            assert check.id == "isolation.exit" and "drill's zygote, is gone" in check.message
        else:
            assert check.id == "isolation.judge-attacked" and "only your code" in check.message
        assert time.monotonic() - started < 20


@pytest.mark.slow  # CI's second run: pytest -m slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=lambda s: s.name)
def test_a_judge_killed_or_stopped_mid_grade_is_reported_at_once(sig):
    """What a user side without Landlock's signal scope could do, done here from outside."""
    with Worker(threads=1) as worker:
        threading.Timer(1.0, os.kill, (worker.proc.pid, sig)).start()
        started = time.monotonic()
        check = failing(worker.grade(make_request(HOSTILE / "infinite_loop.py", device="cpu"), 60))
        assert check.id == "isolation.judge-attacked", check.message
        assert time.monotonic() - started < 5
        assert not worker.alive()


def test_a_malformed_line_on_the_result_channel_is_a_protocol_failure():
    with Worker(threads=1) as worker:
        worker._pending = b'{"event": "report", "report": 5}\n'  # as if the judge had written it
        check = failing(worker.grade(make_request(IMPLS / "correct" / "sdpa_matmul.py", device="cpu"), 60))
        assert check.id == "isolation.protocol" and "malformed or forged" in check.message
        assert not worker.alive()  # the channel is out of step: the next grade starts a new judge


@pytest.mark.parametrize("line", [b"junk", b"5", b'{"event": "report", "report": 5}', b'{"event": "report", "report": {"task": "sdpa"}}',
                                  b'{"event": "check", "check": {"id": 1}}', b'{"event": "start", "total": "x"}',
                                  b'{"event": "usage_error", "message": "m", "exit_code": 77}', b"[" * 100_000])  # fmt: skip
def test_every_malformed_event_is_refused(line):
    with pytest.raises(Malformed):
        parse_event(line)


def test_a_report_the_judge_writes_is_read_back_whole():
    report = Report("sdpa", "cpu", seed=12)
    event = parse_event(json.dumps({"event": "report", "report": report.to_wire()}).encode())
    assert event["report"].to_dict() == report.to_dict()


def test_a_file_writing_drills_history_is_refused_and_recorded_as_failed(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "DRILL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "drill", "grade", str(HOSTILE / "write_history.py"), "--device", "cpu", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["passed"] is False  # one JSON object: nothing forged ahead of it
    assert not (home / "planted.txt").exists() or AVAILABLE["landlock writes"] is not None
    with sqlite3.connect(home / "drill.db") as conn:
        rows = conn.execute("SELECT uid, passed FROM grade_runs").fetchall()
    if AVAILABLE["landlock writes"] is None:
        assert [passed for _, passed in rows] == [0]  # only drill's own record of the failed grade


def test_touching_4_gib_fails_with_the_default_memory_cap(judge):
    check = failing(judge.grade(make_request(HOSTILE / "touch_memory.py", device="cpu"), 60))
    assert check.id == "isolation.memory" and "2 GiB" in check.message, check.message


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_doctor_says_which_protection_is_active_and_why_not(lang, monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from drill.cli import app

    monkeypatch.setenv("DRILL_HOME", str(tmp_path))
    output = CliRunner().invoke(app, ["doctor", "--lang", lang]).stdout
    found = probe("dumpable", "userns", "landlock")["confined"]  # what confining a process really gave here
    lines = output.split("sandbox" if lang == "en" else "沙箱", 1)[1].splitlines()[1:5]
    states = [("active" in ln or "已启用" in ln) for ln in lines]
    assert states[1] == (found["user namespace"] is None) and states[2] == (found["landlock"] is None), lines
    assert all(s or "not available" in ln or "不可用" in ln for s, ln in zip(states, lines))



@pytest.fixture
def shared_home():
    """A DRILL_HOME another user can write (pytest's own tmp_path is root's alone)."""
    home = Path(tempfile.mkdtemp(prefix="drill-unprivileged-"))
    home.chmod(0o777)
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.slow  # CI's second run: pytest -m slow
@pytest.mark.parametrize("name", ["correct", "forge_through_proc", *(pytest.param(n, marks=pytest.mark.slow) for n in ("write_history", "kill_judge"))])
def test_a_whole_grade_as_an_unprivileged_user(name, shared_home):
    """drill run by an ordinary user, whose processes may open each other's /proc entries: the same outcomes."""
    command, why = unprivileged_drill(unprivileged_user())
    if why:
        pytest.skip(why)
    home = shared_home
    path = IMPLS / "correct" / "sdpa_matmul.py" if name == "correct" else HOSTILE / f"{name}.py"
    done = subprocess.run([*command, f"DRILL_HOME={home}", f"HOME={home}", "/usr/bin/python3", "-m", "drill", "grade", str(path),
                           "--device", "cpu", "--json"], cwd="/", capture_output=True, text=True, timeout=180)  # fmt: skip
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    report = json.loads(done.stdout)  # one JSON object: nothing forged ahead of it
    with sqlite3.connect(home / "drill.db") as conn:
        rows = conn.execute("SELECT passed FROM grade_runs").fetchall()
    if name == "correct":
        assert (done.returncode, report["passed"], rows) == (0, True, [(1,)])
        return
    assert (done.returncode, report["passed"], rows) == (1, False, [(0,)]), done.stderr
    check = next(c for c in report["checks"] if c["status"] in ("fail", "error"))
    if name == "kill_judge" and not SIGNALS_SCOPED:
        assert check["id"] == "isolation.judge-attacked", check
    elif name == "kill_judge":
        assert "PermissionError" in check["message"], check
    else:
        assert check["id"].startswith("shape."), check  # its own wrong answer
    assert not (home / "planted.txt").exists() or AVAILABLE["landlock writes"] is not None
