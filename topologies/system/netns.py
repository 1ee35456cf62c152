"""Work in another network namespace from the lab's own process.

Mininet's nodes live in unnamed network namespaces (one per node's shell),
reached through a process in them: `/proc/<pid>/ns/net`. Two ways in:

    with entered(node.pid):        # this thread only, then back (sockets, if_nametoindex)
        sock = socket.socket(...)
    run_command([*nsenter(node.pid), "tc", ...])   # a command run inside it

nsenter enters the network namespace only, so a path (a BPF pin under
/sys/fs/bpf, a script in /tmp) means the same file inside as outside. A
node's Mininet shell does not: mnexec gave it a mount namespace with a /sys
of its own, where /sys/fs/bpf is not mounted.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

CLONE_NEWNET = 0x40000000


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def namespace_path(pid: int) -> str:
    return f"/proc/{pid}/ns/net"


def namespace_id(pid: int) -> int | None:
    """The inode naming process `pid`'s network namespace, or None if the process is gone
    (two namespaces never share one while both exist; a pid may be reused, an inode with it)."""
    try:
        return os.stat(namespace_path(pid)).st_ino
    except OSError:
        return None


def nsenter(pid: int) -> list[str]:
    """The command prefix that runs a command in process `pid`'s network namespace."""
    return ["nsenter", f"--net={namespace_path(pid)}"]


@contextlib.contextmanager
def entered(pid: int):
    """This thread inside process `pid`'s network namespace for the `with` block
    (sockets made there stay there); OSError if it cannot go in."""
    libc = _libc()
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(namespace_path(pid), os.O_RDONLY)
    except OSError:
        os.close(own)
        raise
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot enter the network namespace of process {pid}: {os.strerror(err)}")
        try:
            yield
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:  # a thread must never stay in a lab namespace
                raise SystemExit("could not return to the lab's own network namespace")
    finally:
        os.close(own)
        os.close(target)


def ipv6_counters(pid: int) -> dict[str, int]:
    """The IPv6/ICMPv6 counters of process `pid`'s network namespace (`/proc/<pid>/net/snmp6`,
    e.g. Ip6InNoRoutes), {} if the process is gone or the file cannot be read."""
    try:
        lines = open(f"/proc/{pid}/net/snmp6").read().splitlines()
    except OSError:
        return {}
    counters = {}
    for line in lines:
        name, _, value = line.partition(" ")
        try:
            counters[name] = int(value)
        except ValueError:
            continue  # not a counter line (the file has none today): skip it, never guess
    return counters


def private_loopback(command: list[str]) -> list[str]:
    """`command` run in a network namespace of its own with only its loopback up (root only):
    agents on loopback use the wire's fixed ports, which a second copy in the root namespace
    (a test, another benchmark, a stray agent) would share and take half their packets."""
    return ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', *command]
