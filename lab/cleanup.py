"""Remove every trace of the lab, and only the lab's.

Runs at the end of every subcommand (normal exit, Ctrl-C, exception), at the
start of every run (a previous run killed with SIGKILL), and as
`lab/run.py clean`. It finds what to remove by the lab's own names, never by
"everything": OVS bridges tagged `external_ids:mrclab=1` or named like fabric
switches, root-namespace veths named like fabric switch ports, processes
whose command line names a lab module or a Mininet host of the lab, the BPF
pin directory of the port program. Sysctls the lab changed are restored from
the state file written before the change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

STATE_DIR = Path("/run/mrclab")
SYSCTL_STATE = STATE_DIR / "sysctl.json"
BPF_PIN_DIR = Path("/sys/fs/bpf/mrclab")

SWITCH_RE = re.compile(r"^t[01]p\d+[rs]\d+$")
SWITCH_PORT_RE = re.compile(r"^t[01]p\d+[rs]\d+-eth\d+$")
# Command lines of processes the lab starts (Mininet host shells included).
PROCESS_RE = re.compile(
    r"(-m lab\.controller|-m lab\.pathprobe|-m lab\.jobworker|-m mrc_host\.|mininet:h\d+\b|mrclab-)"
)


def run(cmd: list[str], timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


# ---- sysctls: changed only through here, so they can be restored ----------
def set_sysctl(name: str, value: str) -> None:
    """Set a global sysctl, remembering its original value for teardown."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    saved = json.loads(SYSCTL_STATE.read_text()) if SYSCTL_STATE.exists() else {}
    path = Path("/proc/sys") / name.replace(".", "/")
    if name not in saved:
        saved[name] = path.read_text().strip()
        SYSCTL_STATE.write_text(json.dumps(saved))
    path.write_text(value)


def restore_sysctls() -> list[str]:
    if not SYSCTL_STATE.exists():
        return []
    saved = json.loads(SYSCTL_STATE.read_text())
    for name, value in saved.items():
        (Path("/proc/sys") / name.replace(".", "/")).write_text(value)
    SYSCTL_STATE.unlink()
    return [f"sysctl {k}={v}" for k, v in saved.items()]


# ---- what is left -----------------------------------------------------------
def lab_processes() -> list[tuple[int, str]]:
    me = os.getpid()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if PROCESS_RE.search(cmdline):
            found.append((int(proc.name), cmdline.strip()))
    return found


def lab_bridges() -> list[str]:
    if run(["which", "ovs-vsctl"]).returncode != 0:
        return []
    out = run(["ovs-vsctl", "--timeout=5", "list-br"])
    if out.returncode != 0:
        return []
    bridges = []
    for br in out.stdout.split():
        if SWITCH_RE.match(br):
            bridges.append(br)
            continue
        tag = run(["ovs-vsctl", "--timeout=5", "br-get-external-id", br, "mrclab"])
        if tag.stdout.strip() == "1":
            bridges.append(br)
    return bridges


def lab_links() -> list[str]:
    out = run(["ip", "-o", "link", "show"])
    names = []
    for line in out.stdout.splitlines():
        name = line.split(":", 2)[1].strip().split("@")[0]
        if SWITCH_PORT_RE.match(name):
            names.append(name)
    return names


def leftovers() -> dict[str, list]:
    return {
        "processes": [pid for pid, _ in lab_processes()],
        "bridges": lab_bridges(),
        "links": lab_links(),
        "bpf_pins": [str(p) for p in BPF_PIN_DIR.rglob("*")] if BPF_PIN_DIR.exists() else [],
        "sysctls": list(json.loads(SYSCTL_STATE.read_text())) if SYSCTL_STATE.exists() else [],
    }


# ---- removal ----------------------------------------------------------------
def kill_processes(grace: float = 2.0) -> int:
    procs = lab_processes()
    for pid, _ in procs:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid, _ in procs):
        time.sleep(0.05)
    for pid, _ in procs:
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    return len(procs)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def delete_bridges(bridges: list[str]) -> None:
    if not bridges:
        return
    cmd = ["ovs-vsctl", "--timeout=20"]
    for br in bridges:
        cmd += ["--", "--if-exists", "del-br", br]
    run(cmd, timeout=60)


def delete_links(links: list[str]) -> None:
    if not links:
        return
    # one `ip -batch` for all: deleting one end of a veth removes its peer
    batch = "".join(f"link delete {name}\n" for name in links)
    subprocess.run(["ip", "-force", "-batch", "-"], input=batch, text=True, capture_output=True)


def remove_bpf_pins() -> None:
    """The port program's loader owns its pins; fall back to removing the
    directory if that module cannot be imported (broken checkout)."""
    if not BPF_PIN_DIR.exists():
        return
    try:
        from topologies import port_program
    except ImportError:
        shutil.rmtree(BPF_PIN_DIR, ignore_errors=True)
        return
    port_program.cleanup_all()


def clean() -> dict[str, int]:
    """Remove everything the lab may have left; returns what was removed.
    Raises lab.lock.LabBusy while another process runs the lab."""
    from lab.lock import lab_lock

    with lab_lock():
        return _clean()


def _clean() -> dict[str, int]:
    processes = kill_processes()
    bridges = lab_bridges()
    delete_bridges(bridges)
    links = lab_links()
    delete_links(links)
    remove_bpf_pins()
    sysctls = restore_sysctls()
    return {
        "processes": processes,
        "bridges": len(bridges),
        "links": len(links),
        "sysctls": len(sysctls),
    }
