"""`kill -9` of a run in the middle of its faults, then `lab/run.py clean` (root).

The run's process alone is killed, as in a crash: its controller, Mininet
shells and workers are orphaned, a link is down and a port black-holes.
`clean` must leave the machine as it was before the run, checked by listing
each thing independently of cleanup's own bookkeeping: network namespaces,
OVS bridges, interfaces (veths), tc filters and qdiscs on every interface,
BPF pins, every process the run started, the sysctls the lab changes, the
host's routes. A run afterwards works.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from lab.plumbing import cleanup
from topologies.port_program import port_program

ROOT = Path(__file__).resolve().parents[2]
RUN_PY = str(ROOT / "lab" / "run.py")
FAULTS_TIMEOUT_S = 180
# A two-plane OpenFlow fabric (its controller and OVS bridges are what a crash orphans;
# test_srv6_run.py kills an srv6 run) builds fast; both faults start at once and last far
# past the moment of the kill.
CRASH_SCENARIO = """\
description: a link flap and a black hole, both active when the run is killed
fabric: {planes: 2, dataplane: openflow}
job: {collective: allreduce, buffer_mb: 0.25, iterations: 10000, max_seconds: 120}
transports: [mrc]
faults:
  - {at: 0.5, kind: link_flap, target: t0p0r0-t1p0s0, duration: 100}
  - {at: 0.5, kind: blackhole, target: t0p1r1-t1p1s1, duration: 100}
"""
AFTER_SCENARIO = """\
description: a short clean run after the crash
fabric: {planes: 2, dataplane: openflow}
job: {collective: allreduce, buffer_mb: 0.25, iterations: 3}
transports: [mrc]
"""
# set_sysctl (the build's OVS send buffer) and, inside each host namespace
# only, the builder's host sysctls: none may end up changed here
LAB_SYSCTLS = ("net.core.wmem_default", "net.ipv6.conf.all.disable_ipv6",
               "net.ipv6.conf.default.disable_ipv6", "net.ipv4.ip_local_port_range")
# files the kernel itself creates in every bpffs mount (not pins)
BPFFS_PRELOAD = {"maps.debug", "progs.debug"}


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout


# ---- the machine, listed independently of lab/plumbing/cleanup.py ---------------------------
def interfaces() -> list[str]:
    return sorted(line.split(":", 2)[1].strip().split("@")[0] for line in sh("ip", "-o", "link").splitlines())


def net_namespaces() -> set[str]:
    found = {f"named {name.split()[0]}" for name in sh("ip", "netns", "list").splitlines() if name.strip()}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                found.add(os.readlink(proc / "ns" / "net"))
            except OSError:
                pass  # gone, or unreadable (pid 1 here)
    return found


def tc_state() -> dict:
    state = {"qdiscs": sh("tc", "qdisc", "show")}
    for dev in interfaces():
        for hook in ("ingress", "egress"):
            state[f"{dev} {hook}"] = subprocess.run(["tc", "filter", "show", "dev", dev, hook],
                                                    capture_output=True, text=True).stdout
    return state


def bpf_files() -> list[str]:
    return sorted(str(p) for p in Path("/sys/fs/bpf").rglob("*") if p.name not in BPFFS_PRELOAD)


def sysctls() -> dict:
    return {name: Path("/proc/sys", *name.split(".")).read_text().strip() for name in LAB_SYSCTLS}


def machine() -> dict:
    return {
        "namespaces": net_namespaces(),
        "bridges": sh("ovs-vsctl", "--timeout=5", "list-br").split(),
        "interfaces": interfaces(),
        "veths": sh("ip", "-o", "link", "show", "type", "veth"),
        "tc": tc_state(),
        "bpf_pins": bpf_files(),
        "sysctls": sysctls(),
        "routes": sh("ip", "route") + sh("ip", "-6", "route"),
    }


# ---- the run's processes and faults --------------------------------------------------
def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(root: int) -> dict[int, str]:
    """pid -> start time of every process below `root` (start time: a reused pid is another process)."""
    children: dict[int, list[int]] = {}
    started = {}
    for proc in Path("/proc").iterdir():
        stat = _stat(int(proc.name)) if proc.name.isdigit() else None
        if stat:
            children.setdefault(int(stat[1]), []).append(int(proc.name))
            started[int(proc.name)] = stat[19]
    found, todo = {}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = started[child]
            todo.append(child)
    return found


def still_running(procs: dict[int, str]) -> list[str]:
    alive = []
    for pid, start in procs.items():
        stat = _stat(pid)
        if stat and stat[19] == start and stat[0] != "Z":
            try:
                alive.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
            except OSError:
                pass  # ended just now
    return alive


def differences(before, after) -> str:
    if isinstance(before, dict):
        return "; ".join(f"{k}: {before.get(k)!r} -> {after.get(k)!r}"
                         for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k))
    return f"{before!r} -> {after!r}"


def link_down() -> bool:
    """A fabric switch port set administratively down (the flap)."""
    for line in sh("ip", "-o", "link").splitlines():
        name = line.split(":", 2)[1].strip().split("@")[0]
        flags = re.search(r"<([^>]*)>", line).group(1).split(",")
        if cleanup.SWITCH_PORT_RE.match(name) and "UP" not in flags:
            return True
    return False


def black_hole() -> bool:
    """A port whose port-program config has the black-hole flag."""
    for cfg in cleanup.BPF_PIN_DIR.glob("*/maps/port_cfg"):
        dump = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", str(cfg)], capture_output=True, text=True)
        entries = json.loads(dump.stdout or "[]")
        if any(e["formatted"]["value"]["flags"] & port_program.CFG_BLACKHOLE for e in entries):
            return True
    return False


def wait_for_both_faults(run: subprocess.Popen, output: Path) -> None:
    deadline = time.monotonic() + FAULTS_TIMEOUT_S
    while not (link_down() and black_hole()):
        assert run.poll() is None, f"the run ended early ({run.returncode}): {output.read_text()[-2000:]}"
        assert time.monotonic() < deadline, "the link flap and the black hole did not both start in time"
        time.sleep(0.2)


def stray_in_host_namespace(procs: dict[int, str]) -> subprocess.Popen:
    """A process in host h0's namespace that no lab name matches (a user's
    capture tool, say): it keeps the namespace alive unless cleanup ends it."""
    shell = next(pid for pid in procs if b"mininet:h0\0" in Path(f"/proc/{pid}/cmdline").read_bytes())
    return subprocess.Popen(["nsenter", f"--net=/proc/{shell}/ns/net", "sleep", "600"], start_new_session=True)


def lab(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, *args], capture_output=True, text=True, timeout=timeout)


def test_clean_after_kill_9_in_the_middle_of_faults_leaves_the_machine_as_before(tmp_path, no_leftovers):
    # no_leftovers: this test holds the lab lock (its runs are delegated), so no
    # other lab changes the machine between the two listings
    scenario = tmp_path / "crash.yaml"
    scenario.write_text(CRASH_SCENARIO)
    before = machine()
    output = tmp_path / "run.out"
    with output.open("w") as out:
        run = subprocess.Popen([sys.executable, RUN_PY, "run", str(scenario), "--results", str(tmp_path / "res")],
                               stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_both_faults(run, output)
        started = descendants(run.pid)
        stray = stray_in_host_namespace(started)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert any("topologies.openflow.controller" in c for c in still_running(started)), \
        "the crash should orphan the controller"

    done = lab("clean", timeout=120)
    try:
        ended = stray.wait(timeout=30)
    except subprocess.TimeoutExpired:
        ended = None
        stray.kill()
        stray.wait()
    assert ended == -signal.SIGTERM, "a process in a lab host's namespace survived clean (and kept it alive)"
    after = machine()
    for what in before:
        if what == "namespaces":  # none new (processes of the machine may end meanwhile)
            assert after[what] <= before[what], f"namespaces left: {after[what] - before[what]}"
        else:
            assert after[what] == before[what], f"{what} differ after clean: {differences(before[what], after[what])}"
    assert still_running(started) == [], "processes of the killed run are still running"
    assert done.returncode == 0, done.stdout + done.stderr

    after_scenario = tmp_path / "after.yaml"
    after_scenario.write_text(AFTER_SCENARIO)
    done = lab("run", str(after_scenario), "--results", str(tmp_path / "res"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
