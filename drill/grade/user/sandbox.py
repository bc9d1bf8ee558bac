"""Keep the user side away from drill's processes and files, with what this Linux kernel offers.

Stdlib only (ctypes), and drill's message class for the reasons (see :mod:`loader`): the CLI, the judge, the zygote
and the user side all use it.

- drill's own processes (the CLI while it grades, the judge, the zygote) are non-dumpable
  (``PR_SET_DUMPABLE`` 0): their ``/proc/PID/fd`` and ``/proc/PID/mem`` open only with
  ``CAP_SYS_PTRACE`` over them.
- The user side enters its own user namespace, where it holds no capability over the rest of
  the machine: even when drill runs as root, those ``/proc`` entries stay closed to it.
- Landlock confines the user side: no file written or created outside a private temporary
  folder (so not ``DRILL_HOME``, nor ``/proc/PID/mem``), and no signal to a process outside it
  (the judge and the zygote cannot be killed or stopped).

Each layer is used where the kernel has it; :func:`available` says which ones this machine has
and why not the others (``drill doctor`` prints it).
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys

from .loader import Ev

IS_LINUX = sys.platform.startswith("linux")
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWUSER = 0x10000000
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
# Access rights that write (landlock.h): write, remove, make char/dir/reg/sock/fifo/block/sym, then refer (ABI 2), truncate (ABI 3).
WRITE_FILE = 1 << 1
WRITES_ABI1 = WRITE_FILE | sum(1 << b for b in (4, 5, 6, 7, 8, 9, 10, 11, 12))
REFER, TRUNCATE = 1 << 13, 1 << 14
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signal to a process outside the domain
DEVICES_WRITTEN = ("/dev/null", "/dev/zero", "/dev/full", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                   *(f"/dev/nvidia{i}" for i in range(16)))  # fmt: skip

_libc = ctypes.CDLL(None, use_errno=True) if IS_LINUX else None


def _syscall(number: int, *args) -> int:
    result = _libc.syscall(ctypes.c_long(number), *args)
    return result if result >= 0 else -ctypes.get_errno()


def non_dumpable(on: bool = True) -> bool:
    """Close this process's /proc entries to every process without CAP_SYS_PTRACE over it (``on``),
    or open them again to its own user (``on=False``)."""
    return bool(_libc) and _libc.prctl(PR_SET_DUMPABLE, 0 if on else 1, 0, 0, 0) == 0


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or a negative errno (-38: not built in, -95: not enabled at boot)."""
    if not _libc:
        return -38
    return _syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))


def enter_user_namespace() -> Ev | None:
    """Move this (single-threaded) process into a new user namespace mapping only its own ids; None or why not."""
    if not _libc:
        return Ev("not Linux")
    uid, gid = os.geteuid(), os.getegid()
    non_dumpable(False)  # /proc/self/uid_map of a non-dumpable process belongs to root
    try:
        if _libc.unshare(CLONE_NEWUSER) != 0:
            return Ev("unshare(CLONE_NEWUSER) failed: {why}", why=os.strerror(ctypes.get_errno()))
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        return None
    except OSError as exc:
        return Ev("writing the id map failed: {why}", why=str(exc.strerror))
    finally:
        non_dumpable(True)


def landlock(private_dir: str) -> Ev | None:
    """Allow writes only beneath ``private_dir`` (and to /dev/null and GPU devices), and no signal
    outside this process's descendants; None or why not. Irrevocable for this process and its children."""
    abi = landlock_abi()
    if abi < 1:
        return Ev("Landlock is not available ({why})", why=os.strerror(-abi))
    handled = WRITES_ABI1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    scoped = SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("QQQ", handled, 0, scoped) if abi >= 6 else struct.pack("Q", handled)
    ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return Ev("landlock_create_ruleset failed: {why}", why=os.strerror(-ruleset))
    try:
        rules = [(private_dir, handled)] + [(d, WRITE_FILE | (TRUNCATE if abi >= 3 else 0)) for d in DEVICES_WRITTEN if os.path.exists(d)]
        for path, allowed in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = struct.pack("=Qi", allowed, fd)
                if _syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                            ctypes.c_char_p(rule), ctypes.c_uint32(0)) < 0:  # fmt: skip
                    return Ev("landlock_add_rule({path}) failed: {why}", path=path, why=os.strerror(ctypes.get_errno()))
            finally:
                os.close(fd)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return Ev("prctl(PR_SET_NO_NEW_PRIVS) failed")
        error = _syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        return None if error >= 0 else Ev("landlock_restrict_self failed: {why}", why=os.strerror(-error))
    finally:
        os.close(ruleset)


def confine(private_dir: str) -> dict[str, Ev | None]:
    """Everything this kernel allows, in the forked user side before it imports the user's file:
    {protection: None when active, else why not}."""
    os.environ["TMPDIR"] = private_dir
    import tempfile

    tempfile.tempdir = private_dir
    return {"user namespace": enter_user_namespace(), "landlock": landlock(private_dir)}  # shown as is: keys


def close_descriptors(keep: tuple[int, ...]) -> None:
    """Close every descriptor but stdio and ``keep``: nothing drill holds stays reachable by number."""
    try:
        open_fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in open_fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


PROTECTIONS = ("non-dumpable drill processes", "user namespace", "landlock writes", "landlock signals")  # shown as is: keys (drill.views.doctor_view)


def available() -> list[tuple[str, Ev | None]]:
    """(protection, None when this machine gives it, else why not), probed without confining this process."""
    if not IS_LINUX:
        return [(name, Ev("only on Linux")) for name in PROTECTIONS]
    dumpable, namespace, writes, signals = PROTECTIONS
    found: list[tuple[str, Ev | None]] = [(dumpable, None), (namespace, _probe_user_namespace())]
    abi = landlock_abi()
    if abi < 1:
        why = Ev("the kernel lacks Landlock") if abi == -38 else Ev("Landlock is not enabled at boot (lsm=)") if abi == -95 else \
            Ev("{name}", name=os.strerror(-abi))  # fmt: skip
        found += [(writes, why), (signals, why)]
    else:
        found.append((writes, None))
        found.append((signals, None if abi >= 6 else Ev("Landlock ABI {abi} < 6: the user side can still signal drill's processes", abi=abi)))
    return found


def _probe_user_namespace() -> Ev | None:
    """Try ``unshare(CLONE_NEWUSER)`` in a forked child (a threaded process cannot)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            why = enter_user_namespace()
            os.write(write, json.dumps(why.to_wire()).encode() if why else b"")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        why = f.read().decode()
    os.waitpid(pid, 0)
    return Ev.from_wire(json.loads(why)) if why else None
