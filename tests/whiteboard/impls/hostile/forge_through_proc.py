"""Writes a forged passing report into every channel of drill's processes it can reach through /proc
(the zygote, the judge, the CLI: its ancestors), and pokes /proc/PID/mem; then returns a wrong answer.
Prints what got through, so a test can name any attack the sandbox failed to stop."""
import json
import os


def ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])


def scaled_dot_product_attention(q, k, v, mask=None):
    report = {"task": "sdpa", "device": "cpu", "passed": True, "checks": [], "diagnosis": []}
    line = json.dumps({"event": "report", "report": report}) + "\n"
    for pid in ancestors():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            fds = [str(n) for n in range(64)]  # the numbers may be guessed even when the folder cannot be listed
        for fd in fds:
            try:
                with open(f"/proc/{pid}/fd/{fd}", "w") as f:
                    f.write(line)
                print(f"ATTACK-OK wrote /proc/{pid}/fd/{fd}")
            except OSError:
                pass
        try:
            with open(f"/proc/{pid}/mem", "rb+"):
                print(f"ATTACK-OK opened /proc/{pid}/mem")
        except OSError:
            pass
    return q
