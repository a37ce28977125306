"""Who runs a run — this host and process — and whether a run's recorded owner is a process
of this host that no longer exists.

The owner is written in the runs' ``worker`` column as ``host:pid:start:scope``: ``start``
is when the process started (Linux's ``/proc/<pid>/stat``, so that a pid used again by
another process is not taken for the owner), ``scope`` this boot and pid namespace (so that
containers sharing a host name never judge each other's pids). Either is ``-`` where the
system does not tell. An owner of another host, of another form (a Temporal task queue's, an
older bloge's), or that cannot be judged is taken to be alive: its lease holds.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

UNKNOWN = "-"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of process ``pid``, if /proc tells."""
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # after the command, which may hold spaces
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _scope() -> str:
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = str(Path("/proc/self/ns/pid").readlink())
    except OSError:
        namespace = None
    if boot is None or namespace is None:
        return UNKNOWN
    return f"{boot}/{namespace.removeprefix('pid:').strip('[]')}"


HOST = socket.gethostname()
SCOPE = _scope()


_WORKERS: dict[int, str] = {}


def this_worker() -> str:
    """The owner this process records (a forked worker has its own)."""
    pid = os.getpid()
    worker = _WORKERS.get(pid)
    if worker is None:
        stat = _stat(pid)
        worker = _WORKERS[pid] = f"{HOST}:{pid}:{stat[1] if stat else UNKNOWN}:{SCOPE}"
    return worker


def gone(worker: str | None) -> bool:
    """Whether ``worker`` names a process of this host (and boot, and pid namespace) that
    no longer exists, or that has exited and awaits its parent."""
    parts = (worker or "").split(":")
    if len(parts) != 4:
        return False
    host, pid_text, start, scope = parts
    if host != HOST or scope != SCOPE or not pid_text.isdigit() or int(pid_text) <= 0:
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, as another user's process
    stat = _stat(pid)
    if stat is None:
        return False
    state, started = stat
    return state == "Z" or start not in (UNKNOWN, started)
