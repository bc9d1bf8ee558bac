"""The judge's side of the user process: fork it from the zygote, call its code, read what comes back.

Every call of user code is a request over a socket to a process forked, per grade, from a
pristine zygote (see drill/grade/user/zygote.py); only tensors and handles cross it, in the
format of drill/grade/user/wire.py. A reply that does not follow the format, a death, a
timeout, a print flood or the memory cap ends the grade with a failed check (:class:`Abort`);
an exception of the user's code comes back as :class:`UserCodeError`. Autograd spans both
processes: a differentiable output is attached to the judge's graph by :class:`RemoteGrad`,
whose backward asks the user side for the vector-Jacobian product.
"""

from __future__ import annotations

import json
import os
import re
import select
import selectors
import signal
import socket
import string
import subprocess
import time

import torch
from torch import nn

from drill.grade import spawn
from drill.grade.report import Check
from drill.grade.user import procs, wire
from drill.text.messages import Ev, Msg

STARTUP_LIMIT = 180.0  # seconds for the zygote to import torch (not the user's time)
OUTPUT_CAP = 2 * 1024 * 1024  # bytes of user prints before the run counts as a flood
TAIL = 4096
MAX_NAMES = 20


class UserCodeError(Exception):
    """The user's code raised (or exited); the message points at their own lines."""

    def __init__(self, message: Ev, kind: str = "user"):
        super().__init__(message)
        self.kind = kind  # user | import | not-implemented | rule (it imported drill)


class Abort(BaseException):
    """The user side cannot go on (dead, stuck, flooding, out of memory, or it broke the protocol).

    A BaseException so that no ``except Exception`` in a check swallows it: it ends the grade."""

    def __init__(self, check_id: str, message: Ev, status: str = "error"):
        super().__init__(message)
        self.check = Check(check_id, "robustness", status, message)


class InternalError(Exception):
    """A fault of drill's own grading code; ``detail`` holds the traceback for --debug."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.detail = detail


def protocol(what: Ev | str) -> Abort:
    """``what``: what was wrong with the reply (a WireError's text is drill's own words, for --debug)."""
    return Abort("isolation.protocol", Ev("the user side sent a malformed or forged reply ({what}); stopped it", what=what))


FIELD = re.compile(r"[A-Za-z_]\w{0,30}")  # a value by name: no attribute or item lookup in a template
SPEC = re.compile(r"[<>^+]?\d{0,2},?(\.\d)?[deEfgs%]?")  # no width of millions


def said(wire_form: object) -> Ev:
    """The message the user side sent (:meth:`Msg.to_wire`'s form) rebuilt, when its template only names its values
    (no attribute or item lookup, no huge width) and they are plain, a few levels deep, in a short text with no lone
    surrogate: the user side is the user's process and may forge it. Anything else is shown as its text."""
    try:
        if _plain_message(wire_form, 0):
            message = Msg.from_wire(wire_form)
            if type(message) is Ev and len(message) <= 2000:
                message.encode("utf-8")  # a lone surrogate raises: no JSON or terminal after could take it
                return message
    except (ValueError, TypeError, KeyError, IndexError, UnicodeError, RecursionError):
        pass
    return Ev("{name}", name=str(wire_form)[:2000].encode("utf-8", "replace").decode("utf-8"))  # no lone surrogate


def _plain_message(m: object, depth: int) -> bool:
    if not (type(m) is dict and set(m) == {"msgid", "params", "domain"} and m["domain"] == Ev.DOMAIN and type(m["msgid"]) is str
            and len(m["msgid"]) <= 500 and type(m["params"]) is dict and depth < 8):  # fmt: skip
        return False
    fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(m["msgid"]) if f is not None]
    return (all(FIELD.fullmatch(f) and SPEC.fullmatch(spec) and conv in (None, "r", "s") for f, spec, conv in fields)
            and set(m["params"]) == {f for f, _, _ in fields} and all(_plain_param(v, depth + 1) for v in m["params"].values()))  # fmt: skip


def _plain_param(v: object, depth: int) -> bool:
    """A value each of whose leaves shows in the text (its length is checked there)."""
    if v is None or type(v) in (bool, int, float) or type(v) is str and len(v) <= 2000:
        return True
    if type(v) is list:
        return depth < 8 and len(v) <= 64 and all(_plain_param(x, depth + 1) for x in v)
    if type(v) is dict and set(v) == {"tuple"}:
        return _plain_param(v["tuple"], depth)
    return _plain_message(v, depth)


def size_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TiB"


MAX_VALUE_RECORDS = 3000  # drill.grade.user.value_trace.MAX_RECORDS
MAX_VALUE_LEAVES = 500_000  # its MAX_ELEMENTS, and one per container


def plain_value(v, leaves: list[int], depth: int = 0) -> bool:
    """``v`` is what the value recorder sends: numbers, strings, lists, tuples, tensors, ``{"items": [[k, v], ...]}``
    (a dict) and ``{"bytes": [0..255, ...]}``, no deeper than it nests, no bigger in all than it sends."""
    leaves[0] += v.numel() if isinstance(v, torch.Tensor) else 1
    if leaves[0] > MAX_VALUE_LEAVES or depth > 10:
        return False
    if v is None or type(v) in (bool, int, float, str, torch.Tensor):
        return True
    if type(v) in (list, tuple):
        return all(plain_value(x, leaves, depth + 1) for x in v)
    if type(v) is dict and len(v) == 1 and isinstance(v.get("items"), list):
        return all(type(p) is list and len(p) == 2 and plain_value(p[0], leaves, depth + 1) and plain_value(p[1], leaves, depth + 1)
                   for p in v["items"])  # fmt: skip
    if type(v) is dict and len(v) == 1 and isinstance(v.get("bytes"), list):
        leaves[0] += len(v["bytes"])
        return leaves[0] <= MAX_VALUE_LEAVES and all(type(b) is int and 0 <= b < 256 for b in v["bytes"])
    return False


# --- the zygote ------------------------------------------------------------------


class Zygote:
    """One per judge process: torch imported once, a fresh user side forked for every grade."""

    def __init__(self, threads: int | None = 1, started: tuple[subprocess.Popen | spawn.Forked, socket.socket] | None = None):
        """``started``: a zygote already started or forked by drill.grade.spawn (still warming up)."""
        self.proc, self.control = started or spawn.start_zygote(threads)
        self.threads = threads
        try:
            self._answer(STARTUP_LIMIT)
        except Abort as exc:
            self.close()
            raise InternalError(f"the grader's user-side process did not start: {exc}") from None

    def _answer(self, limit: float) -> dict:
        self.control.settimeout(limit)
        try:
            data = self.control.recv(65536)
        except (OSError, TimeoutError):
            data = b""
        if not data:
            raise Abort("isolation.exit", Ev("the zygote stopped answering"))
        return json.loads(data)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fork(self, config: dict) -> tuple[int, socket.socket, int]:
        """(pid, call socket, output pipe) of a new user side."""
        ours, theirs = socket.socketpair()
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.control, [json.dumps({"op": "fork", **config}).encode()], [theirs.fileno(), out_w])
            return int(self._answer(30)["pid"]), ours, out_r
        except (OSError, Abort):
            ours.close()
            os.close(out_r)
            raise InternalError("the grader's zygote is gone; the next grade starts a new one") from None
        finally:
            theirs.close()
            os.close(out_w)

    def reap(self, pid: int) -> tuple[int | None, list[str]]:
        """Kill the user side ``pid`` and all it left; (its exit code, names of processes left)."""
        try:
            self.control.sendall(json.dumps({"op": "reap", "pid": pid}).encode())
            answer = self._answer(30)
        except (OSError, Abort):
            return None, []
        return answer.get("code"), list(answer.get("left", []))

    def close(self) -> None:
        self.control.close()  # the zygote kills what it still holds and exits
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_ZYGOTES: dict[int | None, Zygote] = {}
REAP_ORPHANS = False  # set by the judge process, a subreaper: kill what a dead zygote's tree left here


def reap_orphans(unreported: frozenset[int] = frozenset()) -> list[str]:
    """Kill the processes re-parented to this judge (a zygote killed by the user's code leaves them)."""
    if not REAP_ORPHANS:
        return []
    return procs.kill_children(keep=frozenset(z.proc.pid for z in _ZYGOTES.values() if z.alive()), unreported=unreported)


def zygote(threads: int | None = 1, started: tuple[subprocess.Popen | spawn.Forked, socket.socket] | None = None) -> Zygote:
    """This process's zygote for ``threads``, started on first use and again if it died
    (``started``: adopt the one the judge forked at start-up)."""
    current = _ZYGOTES.get(threads)
    if current is None or not current.alive():
        if current is not None:
            current.close()
            reap_orphans()
        _ZYGOTES[threads] = current = Zygote(threads, started)
    return current


def close_zygotes() -> None:
    while _ZYGOTES:
        _ZYGOTES.popitem()[1].close()


# --- the user side of one grade --------------------------------------------------------


class UserModule(nn.Module):
    """The judge's stand-in for the user's module: the same submodule names and kinds, copies of its
    parameters (so layouts and references read them as before); calling it is a remote call."""

    def __init__(self, handle: wire.Handle, class_name: str, param_order: list[str]):
        super().__init__()
        self.handle, self.class_name, self.param_order = handle, class_name, param_order

    def forward(self, *args, **kwargs):  # pragma: no cover - calls go through Context.call
        raise TypeError("a user module is called through Context.call")


class Opaque(nn.Module):
    """A submodule of a kind the judge does not rebuild: its parameters and scalar attributes only."""


def rebuild(entry: dict) -> nn.Module:
    kind, a = entry["kind"], entry["attrs"]
    params = entry["params"]
    if kind == "Linear":
        module = nn.Linear(a["in_features"], a["out_features"], bias="bias" in params, device="meta")
    elif kind == "LayerNorm":
        module = nn.LayerNorm(a["normalized_shape"], eps=a["eps"], elementwise_affine=False)
    elif kind == "GELU":
        module = nn.GELU(approximate=a.get("approximate", "none"))
    elif kind == "Dropout":
        module = nn.Dropout(a.get("p", 0.5))
    elif kind in ("ReLU", "Identity", "Sequential", "ModuleList", "ModuleDict"):
        module = getattr(nn, kind)()
    else:
        module = Opaque()
        for name, value in a.items():
            if not hasattr(module, name):
                setattr(module, name, value)
    for name, tensor in params.items():
        if not isinstance(tensor, torch.Tensor) or not name.isidentifier():
            raise ValueError(f"parameter {name!r}")
        module.register_parameter(name, nn.Parameter(tensor.clone()))
    return module


def shadow(value) -> UserModule:
    """The UserModule an ``instantiate`` reply describes."""
    try:
        handle, tree, order = value["module"], value["tree"], value["params"]
        if not isinstance(handle, wire.Handle) or not tree or tree[0]["path"] != "":
            raise ValueError("no root module")
        root = UserModule(handle, str(tree[0]["class"]), [str(n) for n in order])
        for name, tensor in tree[0]["params"].items():
            root.register_parameter(name, nn.Parameter(tensor.clone()))
        for name, value in tree[0]["attrs"].items():
            if not hasattr(root, name):
                setattr(root, name, value)
        built = {"": root}
        for entry in tree[1:]:
            parent, _, name = entry["path"].rpartition(".")
            if parent not in built or not name:
                raise ValueError(f"submodule {entry['path']!r}")
            if "alias" in entry:  # the same module object as an earlier path: share it, as the user's code does
                if entry["alias"] not in built or entry["path"] in built:
                    raise ValueError(f"alias {entry['path']!r}")
                built[parent].add_module(name, built[entry["alias"]])
                built[entry["path"]] = built[entry["alias"]]
                continue
            child = rebuild(entry)
            built[parent].add_module(name, child)
            built[entry["path"]] = child
        names = dict(root.named_parameters())
        if any(n not in names for n in root.param_order):
            raise ValueError("parameter names")
        return root
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError, IndexError) as exc:
        raise protocol(Ev("a module description that cannot be rebuilt: {why}", why=str(exc))) from None


class RemoteGrad(torch.autograd.Function):
    """Attaches outputs computed on the user side to the judge's autograd graph."""

    @staticmethod
    def forward(fctx, user, call_id, flags, outputs, *inputs):
        fctx.user, fctx.call_id = user, call_id
        fctx.metas = [(i.shape, i.dtype) for i in inputs]
        fctx.outs = [(o.shape, o.dtype) for o in outputs]
        fctx.set_materialize_grads(False)
        results = tuple(o.clone() for o in outputs)
        fixed = [r for r, f in zip(results, flags) if not (f and r.is_floating_point())]
        if fixed:
            fctx.mark_non_differentiable(*fixed)
        return results

    @staticmethod
    def backward(fctx, *grads):
        sent = [None if g is None else g.detach().to(dtype).expand(shape).contiguous() for g, (shape, dtype) in zip(grads, fctx.outs)]
        found = fctx.user.vjp(fctx.call_id, sent, fctx.metas)
        return (None, None, None, None, *found)


class UserProcess:
    """The user side of one grade. ``timeout`` is the user's time, summed over its calls."""

    def __init__(self, zyg: Zygote, *, timeout: float, device: torch.device, memory: int | None):
        self.zygote, self.timeout = zyg, timeout
        self.devices = ("cpu",) if device.type == "cpu" else ("cpu", "cuda", *(f"cuda:{i}" for i in range(torch.cuda.device_count())))
        self.memory = memory
        self.pid, self.sock, self.out = zyg.fork({"memory": memory, "devices": list(self.devices)})
        self.pidfd = os.pidfd_open(self.pid) if hasattr(os, "pidfd_open") else None
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.sock, selectors.EVENT_READ)
        self.selector.register(self.out, selectors.EVENT_READ)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ)
        os.set_blocking(self.out, False)
        self.used = self.slowest = 0.0
        self.calls = 0
        self.printed, self.tail = 0, b""
        self.stopped: Abort | None = None
        self.reaped: tuple[int | None, list[str]] | None = None
        self.next_id = 0
        self.kept = False  # a call since the last release left its autograd graph on the user side
        self.entry_name: str = Ev("your code")

    # --- lifetime ----------------------------------------------------------------

    def close(self) -> list[str]:
        """Kill the user side and everything it left; the names of processes that were still running."""
        if self.reaped is None:
            self.reaped = self.zygote.reap(self.pid)
            self._release_fds()
        if not self.zygote.alive():
            self.reaped[1].extend(reap_orphans(frozenset({self.pid})))
        return self.reaped[1]

    def _release_fds(self) -> None:
        self.selector.close()
        self.sock.close()
        os.close(self.out)
        if self.pidfd is not None:
            os.close(self.pidfd)

    def stop(self, abort: Abort) -> Abort:
        """End this user side for ``abort``; later requests raise it again."""
        self.stopped = abort
        if self.reaped is None:  # once reaped, its descriptor numbers may belong to someone else
            self._drain()
        self.close()
        return abort

    # --- requests ------------------------------------------------------------------

    def request(self, op: str, **fields) -> tuple[dict, list[torch.Tensor]]:
        """Send one request; the reply's (header, tensors). Raises UserCodeError, Abort, InternalError."""
        if self.stopped:
            raise self.stopped
        header, buffers = wire.encode({"op": op, **fields})
        started = time.monotonic()
        left = self.timeout - self.used
        try:
            self.sock.settimeout(max(left, 0.001))
            self.sock.sendall(wire.frame(header, buffers))
            self.sock.settimeout(None)
            self.sock.setblocking(False)
            head, payload = self._reply(started + left)
        except (BrokenPipeError, ConnectionResetError):
            raise self.stop(self._ended()) from None
        except (TimeoutError, socket.timeout):
            raise self.stop(self._timed_out(time.monotonic() - started)) from None
        finally:
            spent = time.monotonic() - started
            self.used += spent
        self.calls += 1
        self.slowest = max(self.slowest, spent)
        try:
            reply = wire.parse_header(head)
            tensors = wire.tensors_of(reply, payload, self.devices)
        except wire.WireError as exc:
            raise self.stop(protocol(str(exc))) from None
        if "error" in reply:
            raise self._error(reply)
        return reply, tensors

    def _error(self, reply: dict) -> BaseException:
        message, kind = said(reply.get("error")), reply.get("kind")
        if kind in ("user", "import", "not-implemented", "rule"):
            return UserCodeError(message, kind)
        if kind == "memory":
            wanted = re.search(r"allocate (\d+) bytes", message)
            what = Ev("; it tried to allocate {size} at once", size=size_text(int(wanted.group(1)))) if wanted else Ev("{name}", name="")
            limit = Ev("the limit of {size}", size=size_text(self.memory)) if self.memory else Ev("the machine's memory")
            return self.stop(Abort("isolation.memory", Ev("your code ran out of memory: it may use {limit} (--memory-limit changes it){what}.{output}",
                                                          limit=limit, what=what, output=self._last_output()), "fail"))  # fmt: skip
        if kind == "internal":
            return InternalError(f"the grader's user side failed: {message}", str(reply.get("traceback", "")))
        return self.stop(protocol(Ev("unknown reply kind {kind}", kind=repr(kind))))

    def value(self, reply: dict, tensors: list[torch.Tensor]):
        try:
            return wire.build(reply.get("value"), tensors)
        except wire.WireError as exc:
            raise self.stop(protocol(str(exc))) from None

    def _reply(self, deadline: float) -> tuple[bytes, bytes]:
        buf, need, dead = bytearray(), None, False
        while True:
            if need is None and len(buf) >= wire.FRAME.size:
                try:
                    head, payload = wire.frame_sizes(bytes(buf[: wire.FRAME.size]))
                except wire.WireError as exc:
                    raise self.stop(protocol(str(exc))) from None
                need = (head, wire.FRAME.size + head + payload)
            if need is not None and len(buf) >= need[1]:
                if len(buf) > need[1]:
                    raise self.stop(protocol(Ev("bytes after the reply")))
                start = wire.FRAME.size
                return bytes(buf[start : start + need[0]]), bytes(buf[start + need[0] : need[1]])
            if dead:
                raise BrokenPipeError
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            for key, _ in self.selector.select(remaining):
                if key.fileobj is self.sock:
                    try:
                        data = self.sock.recv(1 << 20)
                    except BlockingIOError:
                        continue
                    if not data:
                        dead = True
                    buf += data
                elif key.fileobj == self.out:
                    self._output()
                else:  # the pidfd: the process has exited; a reply it sent first still counts
                    buf += self._rest()
                    dead = True

    def _rest(self) -> bytes:
        chunks = []
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, OSError):
                break
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)

    def _output(self) -> None:
        try:
            data = os.read(self.out, 65536)
        except BlockingIOError:
            return
        if not data:
            self.selector.unregister(self.out)
            return
        self.printed += len(data)
        self.tail = (self.tail + data)[-TAIL:]
        if self.printed > OUTPUT_CAP:
            raise self.stop(Abort("isolation.output", Ev("printed more than {n} MiB; stopped it (a print in a loop?).{output}",
                                                         n=OUTPUT_CAP // 2**20, output=self._last_output())))  # fmt: skip

    def _drain(self) -> None:
        for _ in range(64):
            try:
                data = os.read(self.out, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.tail = (self.tail + data)[-TAIL:]

    def _ended(self) -> Abort:
        self._drain()
        running = self.pidfd is not None and not select.select([self.pidfd], [], [], 0.5)[0]
        self.reaped = self.zygote.reap(self.pid)
        if running:  # the channel closed, the process did not: the code shut drill's descriptor
            self._release_fds()
            return protocol(Ev("it closed its channel to drill while still running"))
        self._release_fds()
        code = self.reaped[0]
        if code is None:
            return Abort("isolation.exit", Ev("the process ended before finishing, and its parent, drill's zygote, is gone: "
                                              "did the code kill drill's processes?{output}", output=self._last_output()))  # fmt: skip
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:  # a real-time signal has no name
                name = Ev("signal {n}", n=-code)
            if name == "SIGSEGV":
                return Abort("isolation.crash", Ev("the process was killed by {signal} (a segmentation fault).{output}", signal=name,
                                                   output=self._last_output()))  # fmt: skip
            return Abort("isolation.crash", Ev("the process was killed by {signal}.{output}", signal=name, output=self._last_output()))
        return Abort("isolation.exit", Ev("the process exited with code {code} before finishing (os._exit?).{output}", code=code,
                                          output=self._last_output()))  # fmt: skip

    def _timed_out(self, current: float) -> Abort:
        """Too slow when the last call had run about as long as the slowest finished one; stuck otherwise."""
        values = {"limit": self.timeout, "n": self.calls - 1, "slowest": self.slowest, "current": current, "output": self._last_output()}
        if self.calls <= 1:  # nothing returned but the import
            text = Ev("still running after {limit:g} s in its first call of {entry} (an infinite loop?); stopped it. "
                      "--timeout raises the limit.{output}", entry=self.entry_name, limit=self.timeout, output=values["output"])  # fmt: skip
        elif current > max(5 * self.slowest, 0.5):
            text = Ev("still running after {limit:g} s: {n} calls returned in at most {slowest:.2g} s, then one ran {current:.2g} s "
                      "without returning (an infinite loop?); stopped it. --timeout raises the limit.{output}", **values)  # fmt: skip
        else:
            text = Ev("still running after {limit:g} s: {n} calls returned (the slowest in {slowest:.2g} s), so it is not stuck "
                      "but too slow for the grader's small inputs; stopped it. --timeout raises the limit.{output}", **values)  # fmt: skip
        return Abort("isolation.timeout", text, "fail")

    def _last_output(self) -> Ev:
        lines = self.tail.decode("utf-8", "replace").strip().splitlines()[-5:]
        return Ev(" Last output: {output}", output=" | ".join(line[:200] for line in lines)) if lines else Ev("{name}", name="")

    # --- what the checks use -------------------------------------------------------------

    def load(self, path: str) -> dict[str, str]:
        reply, tensors = self.request("load", path=path)
        names = self.value(reply, tensors)
        if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
            raise self.stop(protocol(Ev("the names the file defines")))
        return names

    def entry(self, name: str) -> wire.Handle | None:
        self.entry_name = name
        reply, tensors = self.request("entry", name=name)
        handle = self.value(reply, tensors)
        if handle is not None and not isinstance(handle, wire.Handle):
            raise self.stop(protocol(Ev("the entry point")))
        return handle

    def call(self, target, args, kwargs, *, watch: bool = True, largest: bool = False):
        """``target(*args, **kwargs)`` on the user side: its result, with handles for what is not data."""
        module = target if isinstance(target, UserModule) else None
        sent: list[torch.Tensor] = []
        wire.encode((args, kwargs), collect=sent)
        params = []
        if module is not None and torch.is_grad_enabled():
            named = dict(module.named_parameters())
            params = [named[n] for n in module.param_order]
        track = torch.is_grad_enabled() and not largest and (bool(params) or any(t.requires_grad for t in sent))
        self.next_id += 1
        self.kept = self.kept or track
        call_id = self.next_id
        reply, tensors = self.request("call", target=module.handle if module else target, args=tuple(args), kwargs=dict(kwargs),
                                      id=call_id, watch=watch, track=track, params=bool(params), largest=largest)  # fmt: skip
        mutated = reply.get("mutated")
        if not (isinstance(mutated, list) and all(type(i) is int and 0 <= i < len(sent) for i in mutated)):
            raise self.stop(protocol(Ev("the list of inputs it modified")))
        n_result = len(tensors) - len(mutated)
        if n_result < 0:
            raise self.stop(protocol(Ev("fewer tensors than it modified")))
        for i, new in zip(mutated, tensors[n_result:]):
            if new.shape == sent[i].shape and new.dtype == sent[i].dtype:
                with torch.no_grad():
                    sent[i].copy_(new)
        flags = [d["grad"] for d in reply["tensors"][:n_result]]
        if track and any(flags):
            diff = [t for t in sent if t.requires_grad] + params
            tensors[:n_result] = RemoteGrad.apply(self, call_id, flags, tensors[:n_result], *diff)
        value = self.value(reply, tensors)
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], list)):
            raise self.stop(protocol(Ev("the shape of a call's reply")))
        if largest:
            peak = reply.get("largest")
            if not (isinstance(peak, list) and len(peak) == 3 and type(peak[0]) is int and isinstance(peak[1], list)
                    and all(type(n) is int for n in peak[1]) and isinstance(peak[2], str)):  # fmt: skip
                raise self.stop(protocol(Ev("the largest-tensor record")))
            return value[0], (peak[0], tuple(peak[1]), peak[2][:200])
        return value[0]

    def call_each(self, target, arg_lists: list[tuple], *, watch: bool = True) -> list:
        """``target(*args)`` for each of ``arg_lists`` in one round trip: what a check that calls a function
        hundreds of times (a sampling distribution) needs. No gradient is tracked and inputs are not written
        back: callers send copies and read results only."""
        reply, tensors = self.request("call_each", target=target, args=[tuple(a) for a in arg_lists], watch=watch)
        value = self.value(reply, tensors)
        if not (isinstance(value, list) and len(value) == len(arg_lists)):
            raise self.stop(protocol(Ev("the results of a batch of calls")))
        return value

    def trace(self, target, args, kwargs=None) -> tuple[object, list[dict], str | None]:
        """``target(*args)`` under the user side's op recorder: (its result, the records, checked here, and
        what it raised or None)."""
        module = target if isinstance(target, UserModule) else None
        reply, tensors = self.request("trace", target=module.handle if module else target, args=tuple(args), kwargs=dict(kwargs or {}))
        value = self.value(reply, tensors)
        if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], list) and (value[2] is None or isinstance(value[2], str))):
            raise self.stop(protocol(Ev("the shape of a trace's reply")))
        records = []
        for r in value[1][:1000]:
            if not (isinstance(r, dict) and type(r.get("line")) is int and isinstance(r.get("op"), str)
                    and isinstance(r.get("shape"), list) and all(type(n) is int for n in r["shape"])
                    and isinstance(r.get("dtype"), str) and isinstance(r.get("inputs"), list) and type(r.get("mutates")) is int and -1 <= r["mutates"] < 64
                    and all(type(i) is int and -64 <= i < len(records) for i in r["inputs"])
                    and (r.get("tensor") is None or isinstance(r["tensor"], torch.Tensor))):  # fmt: skip
                raise self.stop(protocol(Ev("a trace record")))
            records.append({**r, "op": r["op"][:60], "dtype": r["dtype"][:20]})
        return value[0], records, None if value[2] is None else value[2][:2000]

    def value_trace(self, target, args, kwargs=None) -> tuple[object, list[dict], str | None]:
        """``target(*args)`` under the user side's value recorder (drill.grade.user.value_trace): (its result,
        the records {line, name, call, fn, value, omitted}, checked here to be plain data, and what it raised or None)."""
        reply, tensors = self.request("value_trace", target=target, args=tuple(args), kwargs=dict(kwargs or {}))
        value = self.value(reply, tensors)
        if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], list) and (value[2] is None or isinstance(value[2], str))):
            raise self.stop(protocol(Ev("the shape of a value trace's reply")))
        records, leaves = [], [0]
        for r in value[1][:MAX_VALUE_RECORDS]:
            if not (isinstance(r, dict) and set(r) == {"line", "name", "call", "fn", "value", "omitted"} and type(r["line"]) is int
                    and type(r["call"]) is int and r["call"] >= 0 and isinstance(r["name"], str) and isinstance(r["fn"], str)
                    and (r["omitted"] is None or isinstance(r["omitted"], str) and r["value"] is None)
                    and plain_value(r["value"], leaves)):  # fmt: skip
                raise self.stop(protocol(Ev("a value-trace record")))
            records.append({**r, "name": r["name"][:100], "fn": r["fn"][:100], "omitted": r["omitted"] and r["omitted"][:40]})
        return value[0], records, None if value[2] is None else value[2][:2000]

    def attribute(self, target, path: str):
        """``target.path`` on the user side: a tensor, a plain value, or a handle (a submodule, a bound method)."""
        reply, tensors = self.request("attr", target=target.handle if isinstance(target, UserModule) else target, path=path)
        return self.value(reply, tensors)

    def describe(self, target) -> UserModule:
        """The shadow of a module the user's code returned (a handle), with copies of its parameters."""
        reply, tensors = self.request("describe", target=target)
        return shadow(self.value(reply, tensors))

    def assign(self, module: UserModule, params: dict[str, torch.Tensor]) -> None:
        """Set parameters of the user's module by name, on the user side and in its shadow alike."""
        self.request("assign", target=module.handle, params=dict(params))
        named = dict(module.named_parameters())
        with torch.no_grad():
            for name, value in params.items():
                named[name].copy_(value)

    def vjp(self, call_id: int, grads, metas) -> list[torch.Tensor | None]:
        reply, tensors = self.request("vjp", id=call_id, grads=list(grads))
        found = self.value(reply, tensors)
        if not (isinstance(found, list) and len(found) == len(metas)):
            raise self.stop(protocol(Ev("the number of gradients")))
        for g, (shape, dtype) in zip(found, metas):
            if g is not None and (not isinstance(g, torch.Tensor) or g.shape != shape or g.dtype != dtype):
                raise self.stop(protocol(Ev("a gradient that does not match its input ({shape}, {dtype})", shape=str(shape), dtype=str(dtype))))
        return found

    def release(self) -> None:
        """Drop the autograd graphs the user side keeps for the calls so far (a round trip only when it keeps one)."""
        if self.stopped is None and self.kept:
            self.request("release")
            self.kept = False

    def instantiate(self, cls, args, *, seed: int, device: torch.device, dtype: torch.dtype, kwargs=None) -> UserModule:
        reply, tensors = self.request("instantiate", cls=cls, args=tuple(args), seed=seed, device=str(device), dtype=wire.NAMES[dtype],
                                      kwargs=dict(kwargs or {}))  # fmt: skip
        return shadow(self.value(reply, tensors))

    def signature(self, target, attr: str | None = None) -> dict | None:
        """{"text": "Name(a, b=1)", "params": [[name, kind, has_default], ...]} of the user's callable, or None."""
        reply, tensors = self.request("signature", target=target, attr=attr)
        found = self.value(reply, tensors)
        if found is None:
            return None
        if not (isinstance(found, dict) and isinstance(found.get("text"), str) and isinstance(found.get("params"), list)
                and all(isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and isinstance(p[1], str)
                        and isinstance(p[2], bool) for p in found["params"])):  # fmt: skip
            raise self.stop(protocol(Ev("a signature")))
        return {"text": found["text"][:500], "params": [tuple(p) for p in found["params"][:64]]}

    def forbid(self, names: dict[str, str]) -> None:
        """Watch these functions too (name: how the rule names it), for a task whose point is to write one."""
        self.request("forbid", names={name: str(shown) for name, shown in names.items()})

    def builtins_seen(self) -> list[str]:
        """The torch builtins the rule saw: names, or a name as a message (seen at the aten level)."""
        reply, tensors = self.request("rules")
        seen = self.value(reply, tensors)
        if not (isinstance(seen, list) and len(seen) <= MAX_NAMES and all(isinstance(s, (str, dict)) for s in seen)):
            raise self.stop(protocol(Ev("the builtin-rule record")))
        return [s[:200] if isinstance(s, str) else said(s) for s in seen]

    def bench(self, target, *args, median: bool = False) -> tuple[float, int]:
        """[seconds, peak bytes] of ``target(*args)`` timed on the user side (see drill.grade.user.measure)."""
        reply, tensors = self.request("bench", target=target, args=tuple(args), median=median)
        found = self.value(reply, tensors)
        if not (isinstance(found, list) and len(found) == 2 and isinstance(found[0], float) and type(found[1]) is int):
            raise self.stop(protocol(Ev("the timing")))
        return found
