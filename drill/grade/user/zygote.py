"""The zygote: ``python drill/grade/user/zygote.py PARENT_PID``, started by the judge with its control socket as stdin
(or run in a child the judge forked right after its ``import torch``: drill.grade.spawn).

It imports torch and the user-side server, then never runs user code nor a parallel op: it
only forks. Each grade gets a fresh child (the user side) from this same pristine state, so
nothing one save does to torch or to Python reaches the next. The control socket carries
JSON requests: ``fork`` (with the call socket and the output pipe passed as descriptors)
answers the child's pid; ``reap`` kills that child, reaps it and kills whatever it left
behind (this process is a subreaper, so escaped descendants end up here), answering the
child's exit status and the names of the processes that were still running.
The zygote is non-dumpable, and each child closes every descriptor but its own two and confines
itself (drill/grade/user/sandbox.py) before it imports the user's file.
"""

import importlib.util
import json
import os
import signal
import shutil
import socket
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[0] = os.getcwd()  # as under `python -m`: the user's file may import modules beside it in the cwd, not ours


def _load_package():
    spec = importlib.util.spec_from_file_location("_drill_user", os.path.join(HERE, "__init__.py"),
                                                  submodule_search_locations=[HERE])  # fmt: skip
    package = importlib.util.module_from_spec(spec)
    sys.modules["_drill_user"] = package
    spec.loader.exec_module(package)


_load_package()
from _drill_user import kernel_guard, procs, sandbox  # noqa: E402

PARENT = int(sys.argv[1])
procs.die_with_parent(PARENT, signal.SIGTERM)
procs.become_subreaper()
sandbox.non_dumpable()
CONTROL_FD = os.dup(0)  # the control socket came as stdin: no descriptor number on the command line
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
PRIVATE: dict[int, str] = {}  # user side pid: its private temporary folder, removed when it is reaped


def _shutdown(*_):
    procs.kill_children()
    for folder in PRIVATE.values():
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(0)


signal.signal(signal.SIGTERM, _shutdown)
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to drill, which stops the grade itself

import torch  # noqa: E402 - paid once here, not per grade

from _drill_user import server, spy  # noqa: E402

spy.watch_python_builtins()  # before any user file imports clip_grad_norm_ or a scheduler


def warm() -> None:
    """Pay torch's first-use costs of the modes and of autograd here, once, on a 2x2 tensor
    (single-threaded, and no user code), not in every user side."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # no OpenMP pool may exist at fork: a forked child would deadlock on it
    x = torch.ones(2, 2, requires_grad=True)
    with spy.BuiltinSpy(), spy.AtenSpy(), spy.LargestTensor():
        y = torch.softmax(x @ x, dim=-1)
    server.vjp([(y, torch.ones_like(y))], [x])  # as the judge's backward pass asks for it
    torch.set_num_threads(threads)


warm()
if "triton" in sys.argv[2:]:  # a kernel task graded on CPU (drill.grade.kernel_env.preload_for): imported once, here
    os.environ["TRITON_INTERPRET"] = "1"  # read as triton.language is built; its cache folders per user side (kernel_guard)
    kernel_guard.warm_interpreter()


def child(call_fd: int, out_fd: int, private: str, config: dict) -> None:
    """The user side: runs in the forked child and never returns."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        procs.die_with_parent(ZYGOTE_PID)
        procs.become_subreaper()
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        sandbox.close_descriptors(keep=(call_fd,))
        sandbox.confine(private)
        kernel_guard.prepare(private, config["devices"])  # before the user's file imports triton
        if config.get("memory"):
            procs.memory_cap(int(config["memory"]))
        server.serve(socket.socket(fileno=call_fd), config["devices"])
    finally:
        os._exit(0)


ZYGOTE_PID = os.getpid()
control = socket.socket(fileno=CONTROL_FD)
control.sendall(b'{"ready": true}')
while True:
    try:
        message, fds, _, _ = socket.recv_fds(control, 65536, 2)
    except OSError:
        _shutdown()
    if not message:
        _shutdown()
    request = json.loads(message)
    if request["op"] == "fork":
        call_fd, out_fd = fds
        private = tempfile.mkdtemp(prefix="drill-user-")
        pid = os.fork()
        if pid == 0:
            child(call_fd, out_fd, private, request)
        PRIVATE[pid] = private
        os.close(call_fd)
        os.close(out_fd)
        control.sendall(json.dumps({"pid": pid}).encode())
    elif request["op"] == "reap":
        pid = request["pid"]
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = None
        left = procs.kill_children()
        if pid in PRIVATE:
            shutil.rmtree(PRIVATE.pop(pid), ignore_errors=True)
        control.sendall(json.dumps({"code": code, "left": left}).encode())
