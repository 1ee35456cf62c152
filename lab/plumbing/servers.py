"""The other servers of a session's fabric (docs/cluster.md): one agent on each, opened
before the build and closed after the teardown (each agent then cleans its server), and a
record of them written before anything is built there, so that `lab/run.py clean` on the
runner reaches them after a crash.

    agents = open_agents(spec, workdir)   # {} when the fabric is on this machine alone
    ...
    close_agents(agents)

The servers are reached with the ssh config file $MRCLAB_SSH_CONFIG names (identity, known
hosts, user), each running the lab from the same path as the runner (setup.sh run there).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from lab.plumbing.cleanup import STATE_DIR
from topologies.system.atomic import write_json_atomic
from topologies.fabric import FabricSpec
from topologies.cluster.placement import placement_of
from topologies.project import PROJECT_ROOT
from topologies.cluster.remote import ssh_config
from topologies.cluster.server_channel import ServerChannel

SERVERS_RECORD = STATE_DIR / "servers.json"
CLEAN_TIMEOUT_S = 120.0
AGENT_CLEAN_WAIT_S = 60.0


def open_agents(spec: FabricSpec, workdir: Path) -> dict[str, ServerChannel]:
    """An open agent on each server but the first (this one); {} for a fabric on one server.
    RemoteError (a BuildError) naming the server that could not be reached; none left open."""
    placement = placement_of(spec)
    if placement is None:
        return {}
    config = ssh_config()
    others = list(placement.servers[1:])
    _record(others, config)
    agents: dict[str, ServerChannel] = {}
    try:
        for server in others:
            agents[server] = ServerChannel(server, config, log=Path(workdir) / f"agent-{server}.log").open()
    except BaseException:
        close_agents(agents)
        raise
    return agents


def close_agents(agents: dict[str, ServerChannel]) -> dict[str, int | None]:
    """End every agent's session (each cleans its server first); server -> its exit status
    (None: it had to be killed). The record goes once every agent ended cleanly."""
    statuses = {server: agent.close() for server, agent in agents.items()}
    if all(status == 0 for status in statuses.values()):
        SERVERS_RECORD.unlink(missing_ok=True)
    return statuses


def _record(servers: list[str], config: Path) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    write_json_atomic(SERVERS_RECORD, asdict(ServersRecord(servers, str(config), str(PROJECT_ROOT))))


@dataclass(frozen=True)
class ServersRecord:
    """The last session's other servers: how to reach them, where the lab is there."""

    servers: list[str]
    ssh_config: str
    checkout: str


def recorded_servers() -> ServersRecord | None:
    """The last session's other servers, as recorded (None if none is, or it is unreadable)."""
    try:
        record = ServersRecord(**json.loads(SERVERS_RECORD.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return record if isinstance(record.servers, list) else None


def clean_servers(named: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """`lab/run.py clean` run on each server of the last session's record and on each server
    `named` (reached with $MRCLAB_SSH_CONFIG); server -> what it said (its last line). The
    record goes once every server it names is clean."""
    record = recorded_servers()
    reach = {server: (record.ssh_config, record.checkout) for server in record.servers} if record else {}
    if named:
        config = str(ssh_config())
        reach |= {server: reach[server] if server in reach else (config, str(PROJECT_ROOT)) for server in named}
    outcomes = {server: _clean_server(server, *how) for server, how in reach.items()}
    if record and all(not outcomes[server].startswith("failed") for server in record.servers):
        SERVERS_RECORD.unlink(missing_ok=True)
    return outcomes


def _clean_server(server: str, config: str, checkout: str) -> str:
    """The last line `lab/run.py clean` said on `server` ("failed: ..." if it failed)."""
    # waits for the lock: an agent whose runner died may still be cleaning its server
    remote = (f"cd {shlex.quote(checkout)} && MRCLAB_LOCK_WAIT={AGENT_CLEAN_WAIT_S:g} "
              "exec .venv/bin/python lab/run.py clean")
    try:
        done = subprocess.run(["ssh", "-F", config, "-T", "-o", "BatchMode=yes", server, remote],
                              capture_output=True, text=True, timeout=CLEAN_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"failed: {exc}"
    said = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1:] or [""]
    return said[0] if done.returncode == 0 else f"failed: {said[0]}"
