"""A second "server" on this one machine, reached over ssh, for tests of the lab spread over
several servers (docs/cluster.md): what Mininet's cluster edition and the lab would drive on
a real second machine, made from namespaces and an sshd of its own.

    server = SecondServer("B", index=1)  # netns mrcsrv-B, veth mrcsrv-B <-> mrcsrv-B-in, 198.18.1.0/30
    server.setup()                       # idempotent: first removes whatever an earlier run left of it
    server.ssh(["ip", "-o", "link"])     # a command run on server B (its namespaces), as root
    server.clock_offset()                # its CLOCK_MONOTONIC minus ours, NTP-style over ssh
    server.teardown()                    # nothing of it is left
    teardown_all()                       # every server any run left, found by name (after a SIGKILL)
    leftovers()                          # what is left of every server: {} when clean

What server B is:

- a named network namespace `mrcsrv-<name>` with one veth to the root namespace, addresses
  from 198.18.0.0/15 (RFC 2544's benchmarking range, never routed): 198.18.<index>.1/30 on the
  root end, .2/30 inside (setup refuses a range the root namespace already uses);
- an sshd inside it (`ip netns exec`), listening on .2:22 only, with its own host key, config,
  authorized key and log in STATE_ROOT/<name> (root only, removed by teardown); root logs in
  with a key generated there, the client pinned to the generated host key;
- its own PID namespace (sshd is its init: killing it ends everything started on server B,
  Mininet node shells included, as powering off a machine would), UTS namespace (hostname
  `srv<name>`) and mount namespace with a private /run, /tmp, /var/log and bpffs (so the lab
  lock /run/mrclab.lock, temp files, login records and BPF pins are server B's own, as on a
  real machine); optionally a time namespace whose CLOCK_MONOTONIC and CLOCK_BOOTTIME run
  `clock_offset_s` ahead of ours, to prove remote timestamps are put on the runner's clock.

What it shares with this machine: the kernel, the file system outside those mounts (the
project checkout, /usr, /etc, /dev), and devices (/dev/net/tun). Root's ssh client setup
(~/.ssh) is never read or written: every ssh goes through `ssh -F <state>/ssh_config`.

Names: every name starts with `mrcsrv-` (PREFIX), never `mrclab-`: the lab's cleanup
(lab/plumbing/cleanup.py) kills every process whose command line holds `mrclab-` and runs
at the start of every lab run, which would take server B's sshd from under a test.

Mininet's cluster edition calls `sudo` (there is none here) and a bare `ssh`:
`server.shim_bin` is a directory holding a `sudo` that runs its command as root (root needs no
sudo; another user through runuser) and an `ssh` that adds `-F <state>/ssh_config`. Put it
first in PATH on this side; server B's sshd puts it first in PATH for every session.

All of it needs root. It takes no lock of its own: hold the machine's lock (on this machine
`flock /tmp/labrun.lock`) around setup .. teardown, and set up one server at a time.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "mrcsrv-"
STATE_ROOT = Path("/var/tmp/mrcsrv")
# the project checkout, which server B runs from the same path; the directories B has its own of
CHECKOUT = Path(__file__).resolve().parents[1]
OWN_DIRS = (Path("/run"), Path("/tmp"), Path("/var/log"))
NETWORK = ipaddress.IPv4Network("198.18.0.0/15")     # RFC 2544: benchmarking, never routed
SSHD = "/usr/sbin/sshd"
NAME_RE = re.compile(r"^[A-Za-z0-9]{1,5}$")          # "mrcsrv-" + name + "-in" fits IFNAMSIZ (15)
READY_TIMEOUT_S = 10.0
# The veth's MTU: a 9000-byte lab frame fits in a VXLAN tunnel (+ 14 Ethernet + 8 VXLAN + 8 UDP
# + 20 IP = 9050) or a gretap with a key (+ 42).
UNDERLAY_MTU = 9100


def missing() -> str | None:
    """Why no second server can be made here (None: it can): for tests to skip with."""
    if os.geteuid() != 0:
        return "a second server needs root"
    if not Path(SSHD).exists():
        return f"{SSHD} missing: sudo ./setup.sh installs openssh-server"
    return None


def missing_tun() -> str | None:
    """Why ssh's own tunnels (`ssh -w`) cannot run here (None: they can)."""
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun missing (ssh -w tunnels need the tun driver)"
    return None


def has_time_namespaces() -> bool:
    """The kernel can give a server a clock of its own (CONFIG_TIME_NS)."""
    return Path("/proc/self/ns/time").exists()


class ClusterHarnessError(RuntimeError):
    """A second server could not be set up, reached or removed; the message says what to do."""


def _run(cmd: list[str], check: bool = True, timeout: float = 30,
         input: str | None = None) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input)
    except subprocess.TimeoutExpired:
        raise ClusterHarnessError(f"{shlex.join(cmd)[:200]} did not finish within {timeout:g} s") from None
    if check and done.returncode != 0:
        raise ClusterHarnessError(f"{shlex.join(cmd)[:200]} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return done


@dataclass
class SecondServer:
    """Server `name` (1-5 letters or digits) on 198.18.<index>.0/30; see the module docstring."""

    name: str = "B"
    index: int = 1
    clock_offset_s: int = 0     # its CLOCK_MONOTONIC/BOOTTIME ahead of ours (a time namespace), 0: none
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not NAME_RE.match(self.name):
            raise ClusterHarnessError(f"server name {self.name!r}: 1-5 letters or digits")
        if not 0 < self.index < 2 * 256:
            raise ClusterHarnessError(f"server index {self.index}: 1-511 (198.18.0.0/15 in /30s of /24s)")

    # ---- names and addresses -------------------------------------------------------------------
    @property
    def netns(self) -> str:
        return f"{PREFIX}{self.name}"

    @property
    def root_veth(self) -> str:
        return f"{PREFIX}{self.name}"

    @property
    def server_veth(self) -> str:
        return f"{PREFIX}{self.name}-in"

    @property
    def subnet(self) -> ipaddress.IPv4Network:
        base = int(NETWORK.network_address) + self.index * 256
        return ipaddress.IPv4Network((base, 30))

    @property
    def root_ip(self) -> str:
        return str(self.subnet.network_address + 1)

    @property
    def ip(self) -> str:
        """Server B's address: what Mininet's cluster edition takes as the server's name."""
        return str(self.subnet.network_address + 2)

    @property
    def hostname(self) -> str:
        return f"srv{self.name}"

    @property
    def state(self) -> Path:
        return STATE_ROOT / self.name

    @property
    def shim_bin(self) -> Path:
        return self.state / "bin"

    @property
    def ssh_config(self) -> Path:
        return self.state / "ssh_config"

    # ---- life cycle ----------------------------------------------------------------------------
    def setup(self) -> "SecondServer":
        """Make server B and wait until ssh reaches it; whatever an earlier run left is removed
        first. ClusterHarnessError (and nothing left behind) if it cannot be made."""
        _require_root()
        _teardown_named(self.name)
        try:
            self._check_free()
            self._write_state()
            self._make_network()
            self._start_sshd()
            self._wait_ready()
        except BaseException:
            _teardown_named(self.name)
            raise
        return self

    def teardown(self) -> None:
        _require_root()
        _teardown_named(self.name)

    def __enter__(self) -> "SecondServer":
        return self.setup()

    def __exit__(self, *exc) -> None:
        self.teardown()

    # ---- using it ------------------------------------------------------------------------------
    def ssh_command(self, args: list[str] | str, tty: bool = False) -> list[str]:
        """The local command that runs `args` (a list, quoted for the remote shell, or one
        shell string) on server B as root."""
        remote = args if isinstance(args, str) else shlex.join(args)
        return ["ssh", "-F", str(self.ssh_config), *(["-tt"] if tty else ["-T"]), self.ip, remote]

    def ssh(self, args: list[str] | str, check: bool = True, timeout: float = 30,
            input: str | None = None) -> str:
        """Run `args` on server B; its stdout. ClusterHarnessError if it fails (and `check`)."""
        return _run(self.ssh_command(args), check=check, timeout=timeout, input=input).stdout

    def shim_env(self, env: dict | None = None) -> dict:
        """An environment for running Mininet's cluster edition against this server: the shims
        first in PATH, HOME in the state directory (MininetCluster makes $HOME/.ssh/mn)."""
        env = dict(os.environ if env is None else env)
        env["PATH"] = f"{self.shim_bin}:{env.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
        env["HOME"] = str(self.state / "home")
        return env

    def clock_offset(self, samples: int = 8) -> tuple[float, float]:
        """(offset, uncertainty) in seconds: server B's CLOCK_MONOTONIC minus ours, from the
        sample with the shortest round trip over one ssh session (offset = remote reading minus
        the midpoint of send and receive; uncertainty = half that round trip)."""
        reader = ("import sys, time\n"
                  "for _ in sys.stdin:\n"
                  "    print(repr(time.clock_gettime(time.CLOCK_MONOTONIC)), flush=True)\n")
        proc = subprocess.Popen(self.ssh_command(["python3", "-u", "-c", reader]), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        taken = []      # (round trip, offset)
        try:
            for _ in range(samples + 1):       # the first answer pays for python's start: dropped
                sent = time.clock_gettime(time.CLOCK_MONOTONIC)
                proc.stdin.write("t\n")
                proc.stdin.flush()
                if not select.select([proc.stdout], [], [], 10)[0]:
                    raise ClusterHarnessError(f"server {self.name} did not answer a clock reading in 10 s")
                line = proc.stdout.readline()
                received = time.clock_gettime(time.CLOCK_MONOTONIC)
                if not line:
                    raise ClusterHarnessError(f"clock reading on server {self.name} failed: "
                                              f"{proc.stderr.read().strip()[-300:]}")
                taken.append((received - sent, float(line) - (sent + received) / 2))
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        round_trip, offset = min(taken[1:] or taken)
        return offset, round_trip / 2

    def sshd_pids(self) -> list[int]:
        """Root-namespace pids of the processes in server B's network namespace (its sshd and
        the sessions in it; not the Mininet nodes started there, which have namespaces of their own)."""
        return _netns_pids(self.netns)

    # ---- setup steps ---------------------------------------------------------------------------
    def _check_free(self) -> None:
        """Refuse a subnet the root namespace already routes or holds an address in."""
        routes = json.loads(_run(["ip", "-j", "-4", "route", "show", "table", "all"]).stdout or "[]")
        for route in routes:
            dst = route.get("dst", "")
            if dst in ("default", ""):
                continue
            try:
                net = ipaddress.IPv4Network(dst if "/" in dst else f"{dst}/32", strict=False)
            except ValueError:
                continue
            if net.overlaps(self.subnet):
                raise ClusterHarnessError(f"{self.subnet} is in use on this machine (route {dst} dev "
                                          f"{route.get('dev')}): pick another index")
        if missing():
            raise ClusterHarnessError(missing())

    def _write_state(self) -> None:
        state = self.state
        STATE_ROOT.mkdir(mode=0o700, parents=True, exist_ok=True)
        state.mkdir(mode=0o700)
        (state / "home").mkdir(mode=0o700)
        self.shim_bin.mkdir(mode=0o755)
        for key in ("host_key", "id"):
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{PREFIX}{self.name}-{key}",
                  "-f", str(state / key)])
        (state / "authorized_keys").write_text((state / "id.pub").read_text())
        host_key = (state / "host_key.pub").read_text().split()
        (state / "known_hosts").write_text(f"{self.ip} {host_key[0]} {host_key[1]}\n")
        path = f"{self.shim_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        (state / "sshd_config").write_text(f"""\
# sshd of test server {self.name} (tests/cluster_harness.py); runs in network namespace {self.netns}
ListenAddress {self.ip}:22
HostKey {state}/host_key
PidFile none
AuthorizedKeysFile {state}/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# the state directory sits below /var/tmp (world-writable): StrictModes would refuse the key
StrictModes no
UseDNS no
# Mininet's cluster edition's ssh links: ssh -w 9:9 -o Tunnel=Ethernet
PermitTunnel yes
AllowAgentForwarding no
AllowTcpForwarding yes
X11Forwarding no
PrintMotd no
PrintLastLog no
# one connection per remote Mininet node shell and per command run on the server
MaxStartups 64:30:128
MaxSessions 64
SetEnv PATH={path} MRCSRV_SERVER={self.name}
LogLevel VERBOSE
""")
        (state / "ssh_config").write_text(f"""\
# ssh client settings for test server {self.name} (tests/cluster_harness.py)
Host {self.ip}
    User root
    IdentityFile {state}/id
    IdentitiesOnly yes
    UserKnownHostsFile {state}/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 5
    ServerAliveInterval 5
    ServerAliveCountMax 3
    LogLevel ERROR
""")
        _write_script(self.shim_bin / "ssh", f'#!/bin/sh\nexec /usr/bin/ssh -F {state}/ssh_config "$@"\n')
        _write_script(self.shim_bin / "sudo", SUDO_SHIM)

    def _make_network(self) -> None:
        ns, root, inner = self.netns, self.root_veth, self.server_veth
        _run(["ip", "netns", "add", ns])
        _run(["ip", "link", "add", root, "mtu", str(UNDERLAY_MTU), "type", "veth", "peer", "name", inner,
              "mtu", str(UNDERLAY_MTU), "netns", ns])
        prefix = self.subnet.prefixlen
        # no IPv6 link-local chatter on the root end: addrgenmode none
        _run(["ip", "link", "set", "dev", root, "addrgenmode", "none"])
        _run(["ip", "addr", "add", f"{self.root_ip}/{prefix}", "dev", root])
        _run(["ip", "link", "set", "dev", root, "up"])
        _run(["ip", "-n", ns, "link", "set", "dev", "lo", "up"])
        _run(["ip", "-n", ns, "addr", "add", f"{self.ip}/{prefix}", "dev", inner])
        _run(["ip", "-n", ns, "link", "set", "dev", inner, "up"])

    def _start_sshd(self) -> None:
        state = self.state
        # the checkout runs on B from the same path, as a deployed copy would: when it lies under
        # a directory B gets its own of (a clone in /tmp), it is bound back in at its path
        kept = next((d for d in OWN_DIRS if CHECKOUT.is_relative_to(d)), None) is not None
        hold, path = shlex.quote(str(state / "checkout")), shlex.quote(str(CHECKOUT))
        inside = "; ".join([
            "set -e",
            f"hostname {self.hostname}",
            *([f"mkdir -p {hold}", f"mount --bind {path} {hold}"] if kept else []),
            # server B's own /run (the lab lock, sshd's privilege separation directory), /tmp,
            # /var/log (login records) and bpffs (the port program's pins)
            "mount -t tmpfs -o mode=0755,size=16m mrcsrv-run /run",
            "mkdir -m 0755 /run/sshd",
            "mount -t tmpfs -o mode=1777,size=256m mrcsrv-tmp /tmp",
            "mount -t tmpfs -o mode=0755,size=16m mrcsrv-log /var/log",
            *([f"mkdir -p {path}", f"mount --bind {hold} {path}"] if kept else []),
            # sshd records logins there; without the files it prints `lastlog_openseek: Couldn't
            # stat /var/log/lastlog` into a tty session, which Mininet's rcmd takes for an error
            "touch /var/log/lastlog /var/log/wtmp /var/log/btmp",
            "mount -t bpf -o mode=0700 bpf /sys/fs/bpf",
            f"exec {SSHD} -D -e -f {state}/sshd_config",
        ])
        clock = (["--time", "--monotonic", str(self.clock_offset_s), "--boottime", str(self.clock_offset_s)]
                 if self.clock_offset_s else [])
        # ip netns exec: the network namespace, and a mount namespace whose /sys shows it;
        # unshare: pid (sshd is its init), uts, mount (private), time; --kill-child: if unshare
        # is killed, its child (server B's init) goes too
        cmd = ["ip", "netns", "exec", self.netns, "unshare", "--pid", "--fork", "--kill-child=SIGKILL",
               "--mount-proc", "--uts", "--propagation", "private", *clock, "sh", "-c", inside]
        with open(state / "sshd.log", "ab") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True, close_fds=True)
        (state / "server.json").write_text(json.dumps({"unshare_pid": proc.pid, "netns": self.netns,
                                                       "ip": self.ip}) + "\n")
        self._proc = proc

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                break
            done = _run(self.ssh_command(["true"]), check=False, timeout=10)
            if done.returncode == 0:
                return
            last = done.stderr.strip()
            time.sleep(0.1)
        log = (self.state / "sshd.log").read_text(errors="replace").strip()[-800:]
        raise ClusterHarnessError(f"server {self.name}: ssh {self.ip} not reachable within {READY_TIMEOUT_S:g} s "
                                  f"(ssh said: {last or '-'}; sshd log: {log or '-'})")


SUDO_SHIM = """#!/bin/sh
# sudo for a machine without sudo, for Mininet's cluster edition (`sudo -E [-u USER] CMD`,
# tests/cluster_harness.py): root runs CMD as it is, another user through runuser.
user=
while [ $# -gt 0 ]; do
    case "$1" in
        -u) user=$2; shift 2 ;;
        -u*) user=${1#-u}; shift ;;
        --) shift; break ;;
        -*) shift ;;
        *) break ;;
    esac
done
if [ -n "$user" ] && [ "$user" != root ] && [ "$(id -u)" = 0 ]; then
    exec runuser -u "$user" -- "$@"
fi
exec "$@"
"""


def _write_script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _require_root() -> None:
    if os.geteuid() != 0:
        raise ClusterHarnessError("a second server needs root (namespaces, an sshd)")


# ---- finding and removing servers by name ----------------------------------------------------
def _netns_pids(netns: str) -> list[int]:
    done = _run(["ip", "netns", "pids", netns], check=False)
    return [int(p) for p in done.stdout.split()] if done.returncode == 0 else []


def _ns_inode(pid: int, kind: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/{kind}").st_ino
    except OSError:
        return None


def _all_pids() -> list[int]:
    me = os.getpid()
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and int(p.name) != me]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def server_processes(name: str) -> list[int]:
    """Every process of server `name`: those in its network namespace, everything in the PID
    namespaces they opened (the Mininet nodes started on it), and on this side every process
    whose command line names its state directory (ssh clients, ssh tunnels, its unshare)."""
    own_pidns = _ns_inode(os.getpid(), "pid")
    in_netns = set(_netns_pids(f"{PREFIX}{name}"))
    pidns = {_ns_inode(pid, "pid") for pid in in_netns} - {None, own_pidns}
    marker = f"{STATE_ROOT}/{name}/"
    found = set(in_netns)
    for pid in _all_pids():
        if (pidns and _ns_inode(pid, "pid") in pidns) or marker in _cmdline(pid):
            found.add(pid)
    return sorted(found)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _kill(pids: list[int], timeout: float = 5.0) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def _links() -> list[str]:
    out = _run(["ip", "-o", "link", "show"], check=False).stdout
    return [line.split(":", 2)[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]


def _namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _teardown_named(name: str) -> None:
    """Remove server `name`: its processes (SIGKILL: server B is powered off), its veth, its
    network namespace, its state directory. Each step finds its object by name, so it works
    whatever an earlier run (killed at any point) left."""
    for _ in range(3):      # a process forked while we killed: try again
        pids = server_processes(name)
        if not pids:
            break
        _kill(pids)
    root = f"{PREFIX}{name}"
    if root in _links():
        _run(["ip", "link", "del", root], check=False)
    if root in _namespaces():
        _run(["ip", "netns", "del", root], check=False)
    shutil.rmtree(STATE_ROOT / name, ignore_errors=True)
    left = leftovers_of(name)
    if left:
        raise ClusterHarnessError(f"server {name} could not be removed: {left}")


def leftovers_of(name: str) -> dict[str, list]:
    root = f"{PREFIX}{name}"
    found = {"processes": server_processes(name),
             "namespaces": [n for n in _namespaces() if n == root],
             "links": [n for n in _links() if n in (root, f"{root}-in")],
             "state": [str(STATE_ROOT / name)] if (STATE_ROOT / name).exists() else []}
    return {k: v for k, v in found.items() if v}


def server_names() -> list[str]:
    """Every server some run left, by its names: network namespaces and root-namespace links
    starting with PREFIX, state directories under STATE_ROOT."""
    names = {n[len(PREFIX):] for n in _namespaces() if n.startswith(PREFIX)}
    names |= {n[len(PREFIX):].removesuffix("-in") for n in _links() if n.startswith(PREFIX)}
    if STATE_ROOT.exists():
        names |= {p.name for p in STATE_ROOT.iterdir() if p.is_dir()}
    return sorted(n for n in names if NAME_RE.match(n))


def leftovers() -> dict[str, dict]:
    """What is left of every server: {} when the machine is clean of them."""
    return {name: left for name in server_names() if (left := leftovers_of(name))}


def teardown_all() -> list[str]:
    """Remove every server any run left (after a SIGKILL); the names removed."""
    _require_root()
    names = server_names()
    for name in names:
        _teardown_named(name)
    try:
        STATE_ROOT.rmdir()      # only if empty: the last server is gone
    except OSError:
        pass
    return names


# ---- Mininet's cluster edition on this kernel -------------------------------------------------
def remote_vxlan_link_class():
    """Mininet cluster edition's RemoteGRELink with a VXLAN tunnel instead of gretap: kernels
    built without CONFIG_NET_IPGRE (this machine's) refuse gretap ("Error: Unknown device
    type."); VXLAN is built in. Same shape: each end made in its server's root namespace
    (which keeps the UDP socket there), then moved into its node."""
    from mininet.examples.cluster import RemoteGRELink
    from mininet.util import quietRun

    class RemoteVXLANLink(RemoteGRELink):
        VNI = 0
        DSTPORT = 4789

        def makeTunnel(self, node1, node2, intfname1, intfname2, addr1=None, addr2=None):
            assert node1.server != node2.server
            if node2.server == "localhost":
                return self.makeTunnel(node2, node1, intfname2, intfname1, addr2, addr1)
            ip1, ip2 = node1.serverIP, node2.serverIP
            if node1.server == "localhost":   # the address this side reaches server 2 from
                ip1 = quietRun(f"ip route get {node2.serverIP}").split(" src ")[1].split()[0]
            type(self).VNI += 1
            for node, intf, addr, local, remote in ((node1, intfname1, addr1, ip1, ip2),
                                                    (node2, intfname2, addr2, ip2, ip1)):
                result = node.rcmd(f"ip link add name {intf} type vxlan id {self.VNI} local {local} "
                                   f"remote {remote} dstport {self.DSTPORT} nolearning")
                if result.strip():
                    raise Exception(f"error creating vxlan on {node}: {result.strip()}")
                if addr:
                    node.rcmd(f"ip link set {intf} address {addr}")
                node.rcmd(f"ip link set dev {intf} up")
                if not self.moveIntf(intf, node):
                    raise Exception(f"interface move failed on node {node}")
            return None

    return RemoteVXLANLink


# What the tests that check clock conversion give server B: its CLOCK_MONOTONIC this far ahead,
# so a remote timestamp not put on the runner's clock is 1000 s off (0 without time namespaces)
SKEWED_CLOCK_S = 1000 if has_time_namespaces() else 0


@contextmanager
def second_server(name: str = "B", index: int = 1, clock_offset_s: float = 0):
    """Server `name` set up for the block, torn down after it, leaving nothing of any server;
    ClusterHarnessError first if an earlier run left a server."""
    if leftovers():
        raise ClusterHarnessError(f"second servers left by an earlier run: {leftovers()} (teardown_all())")
    srv = SecondServer(name, index=index, clock_offset_s=clock_offset_s).setup()
    try:
        yield srv
    finally:
        srv.teardown()
    assert leftovers() == {}
