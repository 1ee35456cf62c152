"""Remove every trace of the lab, and only the lab's.

Runs at the end of every subcommand (normal exit, Ctrl-C, exception), at the
start of every run (a previous run killed with SIGKILL), and as
`lab/run.py clean`. It finds what to remove by the lab's own names, never by
"everything": OVS bridges tagged `external_ids:mrclab=1` or named like fabric
switches, root-namespace veths named like fabric switch ports, processes
whose command line names a lab module or a Mininet node of the lab, every
process inside a network namespace that holds a lab host NIC (`h<H>-eth<P>`),
tc attachments of the port program (or the srv6 uN program) on any interface, the BPF
pin directory of both, the patch namespace of crossing cables (topologies/cluster/remote.py). Sysctls
the lab changed are restored from the state file written before the change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from faults.pause import PAUSED_DIR, resume_recorded
from lab.plumbing.lock import lab_lock
from topologies.system.atomic import write_json_atomic
from topologies.system.commands import run_command
from topologies.port_program import port_program
from topologies.names import Host, NicPort, Switch, SwitchPort
from topologies.port_program.port_program import LAB_PIN_ROOT
from topologies.cluster.remote import clean_patch_namespace, patch_namespaces
from topologies.dataplanes import DATAPLANE_TC_PROGRAMS
from topologies.system.waiting import wait_until

STATE_DIR = Path("/run/mrclab")
SYSCTL_STATE = STATE_DIR / "sysctl.json"
BPF_PIN_DIR = LAB_PIN_ROOT  # not PIN_ROOT: pins a test moved elsewhere are that test's to remove

# The lab's names, whatever the fabric's size (topologies/names.py): bridges are
# switches, root-namespace veths switch ports, a host namespace holds NIC ports.
SWITCH_RE = re.compile(rf"^(?:{Switch.SHAPE})$")
SWITCH_PORT_RE = re.compile(rf"^(?:{SwitchPort.SHAPE})$")
HOST_NIC_RE = re.compile(rf"^(?:{NicPort.SHAPE})$")
# Every module the lab starts as `python -m MODULE`: the controller, check's
# path probes, the job and incast workers, incast background traffic, a
# standalone agent. A new one must be added here or a crashed run leaves it
# running; tests/unit/test_lock.py fails if the code launches one not listed.
LAB_MODULES = ("topologies.openflow.controller", "lab.inhost.pathprobe", "lab.inhost.jobworker",
               "lab.inhost.incastworker", "lab.inhost.bwworker", "faults.incast", "mrc_host.agent", "lab.inhost.heartbeat",
               "faults.background_load", "lab.inhost.mapper", "topologies.srv6.routing",
               "lab.plumbing.server_agent")   # here: the ssh to another server's agent (its end cleans that server)
# Mininet's shell of each node the builder creates: hosts, switches, the controller c0.
MININET_NODE = rf"mininet:({Host.SHAPE}|{Switch.SHAPE}|c0)"
# Command lines of processes the lab starts (`mrclab-`: the lab's temp files and tags).
PROCESS_RE = re.compile(
    "|".join([rf"-m {re.escape(m)}(\s|$)" for m in LAB_MODULES] + [rf"{MININET_NODE}(\s|$)", "mrclab-"])
)
# The lab's tc programs' function names, as bpftool shows them: the switch port program
# (topologies/port_program/port_program.c) and the srv6 routers' uN program (topologies/srv6/un_program.c).
PORT_PROGRAM_NAME = "port_egress"
LAB_TC_PROGRAMS = (PORT_PROGRAM_NAME, *DATAPLANE_TC_PROGRAMS)


def run(cmd: list[str], timeout: float = 20, input: str | None = None) -> subprocess.CompletedProcess:
    """Cleanup reads the exit status itself: what is already gone is no error."""
    return run_command(cmd, timeout=timeout, input=input, check=False)


# ---- sysctls: changed only through here, so they can be restored ----------
def set_sysctl(name: str, value: str) -> None:
    """Set a global sysctl, remembering its original value for teardown."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    saved = saved_sysctls()
    path = Path("/proc/sys") / name.replace(".", "/")
    if name not in saved:
        saved[name] = path.read_text().strip()
        write_json_atomic(SYSCTL_STATE, saved, indent=None)
    path.write_text(value)


def saved_sysctls() -> dict[str, str]:
    """name -> original value of every sysctl the lab changed and has not restored.

    The file is written atomically, so it is whole or absent; one that is
    damaged anyway (edited by hand, a disk error) is set aside with a warning
    instead of stopping the cleanup that would remove everything else."""
    if not SYSCTL_STATE.exists():
        return {}
    try:
        saved = json.loads(SYSCTL_STATE.read_text())
        if isinstance(saved, dict) and all(isinstance(v, str) for v in saved.values()):
            return saved
    except (OSError, ValueError):
        pass
    aside = SYSCTL_STATE.with_suffix(".damaged")
    SYSCTL_STATE.replace(aside)
    sys.stderr.write(f"warning: {SYSCTL_STATE} was unreadable (moved to {aside}): "
                     "the sysctls it recorded cannot be restored automatically\n")
    return {}


def restore_sysctls() -> list[str]:
    saved = saved_sysctls()
    if not saved:
        return []
    for name, value in saved.items():
        (Path("/proc/sys") / name.replace(".", "/")).write_text(value)
    SYSCTL_STATE.unlink()
    return [f"sysctl {k}={v}" for k, v in saved.items()]


# ---- what is left -----------------------------------------------------------
def _other_pids() -> list[int]:
    """Every other process of this PID namespace: on a machine that is several servers of one
    fabric (tests/cluster_harness.py), another server's processes are that server's to clean."""
    me = os.getpid()
    ours = _pid_namespace("self")
    return [int(p.name) for p in Path("/proc").iterdir()
            if p.name.isdigit() and int(p.name) != me and _pid_namespace(p.name) == ours]


def _pid_namespace(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def lab_processes() -> list[tuple[int, str]]:
    found = []
    for pid in _other_pids():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if PROCESS_RE.search(cmdline):
            found.append((pid, cmdline.strip()))
    return found


def lab_namespaces() -> dict[str, list[int]]:
    """Network namespaces holding a lab host NIC -> the processes inside them.
    Mininet's host namespaces are unnamed: they live as long as one process
    in them does, whatever its command line, so every such process is the lab's."""
    ours = os.readlink("/proc/self/ns/net")
    members: dict[str, list[int]] = {}
    for pid in _other_pids():
        try:
            ns = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if ns != ours:
            members.setdefault(ns, []).append(pid)
    return {ns: pids for ns, pids in members.items() if any(_sees_host_nic(pid) for pid in pids[:3])}


def _sees_host_nic(pid: int) -> bool:
    try:  # /proc/PID/net/dev lists the interfaces of PID's network namespace
        lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    return any(HOST_NIC_RE.match(line.split(":", 1)[0].strip()) for line in lines)


def lab_tc_filters() -> list[str]:
    """Interfaces of this namespace where tc runs a port program no one else
    pinned (the port program's own tests pin theirs elsewhere and clean up
    after themselves; the lab's pins may already be gone)."""
    if shutil.which("bpftool") is None:
        return []
    progs, attached = run(["bpftool", "-j", "-f", "prog", "show"]), run(["bpftool", "-j", "net", "show"])
    try:
        progs, attached = json.loads(progs.stdout or "[]"), json.loads(attached.stdout or "[]")
    except json.JSONDecodeError:
        return []
    if not (isinstance(progs, list) and isinstance(attached, list)):
        return []  # bpftool's {"error": ...}, e.g. without root
    ours = {p["id"] for p in progs if p.get("name") in LAB_TC_PROGRAMS
            and all(Path(pin).is_relative_to(BPF_PIN_DIR) for pin in p.get("pinned", []))}
    return sorted({a["devname"] for entry in attached for a in entry.get("tc", []) if a.get("id") in ours})


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
        "namespaces": sorted(lab_namespaces()),
        "bridges": lab_bridges(),
        "links": lab_links(),
        "tc_filters": lab_tc_filters(),
        "bpf_pins": [str(p) for p in BPF_PIN_DIR.rglob("*")] if BPF_PIN_DIR.exists() else [],
        "sysctls": list(saved_sysctls()),
        "paused": [p.name for p in PAUSED_DIR.iterdir()] if PAUSED_DIR.exists() else [],
        "patch_namespaces": patch_namespaces(),
    }


# ---- removal ----------------------------------------------------------------
def kill_processes(grace: float = 2.0) -> int:
    """SIGTERM the lab's processes and everything in its hosts' namespaces
    (which ends those namespaces); SIGKILL what is still there after `grace` s."""
    pids = {pid for pid, _ in lab_processes()}
    pids.update(pid for members in lab_namespaces().values() for pid in members)
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    wait_until(lambda: not any(_alive(pid) for pid in pids), grace, interval=0.05)
    for pid in pids:
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    return len(pids)


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
    run(["ip", "-force", "-batch", "-"], input=batch, timeout=60)


def detach_tc_filters(interfaces: list[str]) -> None:
    """Port program attachments that outlived their interface's lab name or their pins."""
    if not interfaces:
        return
    for ifname in interfaces:
        port_program.detach(ifname)


def remove_bpf_pins() -> None:
    """The port program's loader owns its pins."""
    if not BPF_PIN_DIR.exists():
        return
    port_program.cleanup_all()


def clean() -> dict[str, int]:
    """Remove everything the lab may have left; returns what was removed.
    Raises lab.plumbing.lock.LabBusy while another process runs the lab."""
    with lab_lock():
        return _clean()


def _clean() -> dict[str, int]:
    # first: a process a pause fault left stopped ignores SIGTERM, and a stopped
    # ovs-vswitchd (not a lab process) would hang every ovs-vsctl below
    resumed = resume_recorded()
    processes = kill_processes()
    bridges = lab_bridges()
    delete_bridges(bridges)
    links = lab_links()
    delete_links(links)
    filters = lab_tc_filters()
    detach_tc_filters(filters)
    remove_bpf_pins()
    sysctls = restore_sysctls()
    patches = clean_patch_namespace()
    return {
        "processes": processes,
        "resumed": resumed,
        "bridges": len(bridges),
        "links": len(links),
        "tc_filters": len(filters),
        "sysctls": len(sysctls),
        "patch_namespaces": int(patches),
    }
