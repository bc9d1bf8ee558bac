"""``python sandbox_probe.py LAYER...``: confine a forked child with the sandbox's LAYERs (dumpable,
userns, landlock; or none), try each attack on this process and on a folder standing for
DRILL_HOME, and print {"attacks": {attack: true when it got through}, "confined": {layer: why not}}.
Used by test_hostile_sandbox.py, as root and as an unprivileged user."""

import json
import os
import signal
import sys
import tempfile

from drill.grade.user import sandbox


def attacks(home: str, parent: int, channel: int) -> dict[str, bool]:
    found = {}
    try:
        with open(os.path.join(home, "planted.txt"), "w") as f:
            f.write("x")
        found["write DRILL_HOME"] = True
    except OSError:
        found["write DRILL_HOME"] = False
    try:
        with open(f"/proc/{parent}/fd/{channel}", "w") as f:
            f.write("forged\n")
        found["write a drill process's pipe through /proc"] = True
    except OSError:
        found["write a drill process's pipe through /proc"] = False
    try:
        open(f"/proc/{parent}/mem", "rb+").close()
        found["open a drill process's /proc/PID/mem"] = True
    except OSError:
        found["open a drill process's /proc/PID/mem"] = False
    try:
        os.kill(parent, signal.SIGCONT)  # harmless, yet needs the same permission as SIGKILL
        found["signal a drill process"] = True
    except OSError:
        found["signal a drill process"] = False
    return found


def main(layers: list[str]) -> None:
    home = tempfile.mkdtemp()
    private = tempfile.mkdtemp()
    channel_r, channel_w = os.pipe()
    if "dumpable" in layers:
        sandbox.non_dumpable()
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(result_r)
            confined = {}
            if "userns" in layers:
                confined["user namespace"] = sandbox.enter_user_namespace()
            if "landlock" in layers:
                confined["landlock"] = sandbox.landlock(private)
            with open(os.path.join(private, "scratch"), "w") as f:  # its own folder stays writable
                f.write("ok")
            os.write(result_w, json.dumps({"attacks": attacks(home, os.getppid(), channel_w), "confined": confined}).encode())
        finally:
            os._exit(0)
    os.close(result_w)
    with os.fdopen(result_r) as f:
        print(f.read())
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1:])
