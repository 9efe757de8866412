"""Who listens on a TCP port: a managed server's readiness check asks whether the listener on its port is the job's
own server (a process of the group it started) and whether that listener is bound to loopback only.

Read from Linux's ``/proc``: the listening sockets of ``/proc/net/tcp`` and ``tcp6`` (their inodes and local
addresses), and the socket inodes among the open files of the group's processes. Another user's process shows its
socket in ``/proc/net/tcp`` but not its files, so it counts as another process, as it should. Elsewhere (no
``/proc/net/tcp``) :func:`listeners` returns None and the caller cannot tell.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

LISTEN = "0A"
PROC = Path("/proc")


@dataclass(frozen=True)
class Listener:
    inode: int
    address: str  # as /proc writes it: little-endian hex
    loopback: bool


def _loopback(hex_addr: str) -> bool:
    if len(hex_addr) == 8:  # IPv4, little-endian: 127.x.x.x ends in 7F
        return hex_addr[6:8].upper() == "7F"
    words = hex_addr.upper()
    if words == "00000000000000000000000001000000":  # ::1
        return True
    return words[:24] == "0000000000000000FFFF0000" and words[30:32] == "7F"  # ::ffff:127.x.x.x


def listeners(port: int, proc: Path = PROC) -> list[Listener] | None:
    """The sockets listening on TCP ``port`` (any address, IPv4 and IPv6), or None where ``/proc/net/tcp`` is
    absent."""
    tables = [proc / "net" / name for name in ("tcp", "tcp6")]
    if not tables[0].is_file():
        return None
    found = []
    for table in tables:
        try:
            rows = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 10 or fields[3] != LISTEN:
                continue
            address, _, hex_port = fields[1].rpartition(":")
            if int(hex_port, 16) == port:
                found.append(Listener(int(fields[9]), address, _loopback(address)))
    return found


def group_pids(pgid: int, proc: Path = PROC) -> list[int]:
    """The running processes of process group ``pgid`` (zombies left out)."""
    pids = []
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def socket_inodes(pids: list[int], proc: Path = PROC) -> set[int]:
    """The inodes of the sockets the processes ``pids`` hold open."""
    inodes = set()
    for pid in pids:
        fd_dir = proc / str(pid) / "fd"
        try:
            names = os.listdir(fd_dir)
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(fd_dir / name)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    return inodes


def port_owner(port: int, pgid: int, proc: Path = PROC) -> tuple[str, list[Listener]]:
    """Who listens on ``port``: ``("none", [])``, ``("ours", listeners)`` when every listener belongs to process group
    ``pgid``, ``("other", listeners)`` when one does not, ``("unknown", [])`` without ``/proc``."""
    found = listeners(port, proc)
    if found is None:
        return "unknown", []
    if not found:
        return "none", []
    ours = socket_inodes(group_pids(pgid, proc), proc)
    return ("ours" if all(s.inode in ours for s in found) else "other"), found
