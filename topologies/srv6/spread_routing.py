"""The baseline's routing over a fabric spread on several servers (docs/cluster.md): each
server routes its own planes, the runner's by its own routing process, every other server's
through its agent (lab/plumbing/server_agent.py); their logs become one, on the runner's clock.

A plane's routing never leaves it (a T0-T1 link withdrawal rewrites only that plane's T0s),
so the processes need not talk to each other. What the rest of the lab reads is the one log
(`routing_log`, the ControlProcess protocol of topologies/dataplane.py): a thread appends
every process's new records to it, a remote record's `t_mono` put on the runner's clock by
the offset measured at start (topologies/cluster/server_channel.py clock_offset), within its bound.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from topologies.build import BuildError
from topologies.fabric import FabricSpec
from topologies.cluster.placement import placement_of
from topologies.routing import ROUTING_LOG, connected_since, read_new_lines
from topologies.srv6.routing import Srv6RoutingProcess
from topologies.system.waiting import wait_until

MERGE_INTERVAL_S = 0.1     # how stale the one log may be behind a process's own


class SpreadRouting:
    port = None   # it listens on nothing (as Srv6RoutingProcess)

    def __init__(self, spec: FabricSpec, workdir: Path, convergence_delay: float, hold_down: float, agents: dict):
        placement = placement_of(spec)
        self.spec, self.agents = spec, agents
        own = Path(workdir) / "routing-here"   # the runner's process's own files, beside the one log
        own.mkdir(parents=True, exist_ok=True)
        self.here = Srv6RoutingProcess(spec, own, convergence_delay, hold_down, server=placement.servers[0])
        self.fabric_file = self.here.fabric_file
        self.routing_log = Path(workdir) / ROUTING_LOG
        self.delays = (convergence_delay, hold_down)
        self.hold_down = hold_down
        self.offsets: dict[str, tuple[float, float]] = {}   # server -> (offset, bound)
        self._read = {"here": 0, **{server: 0 for server in agents}}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self, timeout: float = 30.0) -> None:
        self.routing_log.write_text("")
        for server, agent in self.agents.items():
            self.offsets[server] = agent.clock_offset()
        self.here.start(timeout)
        names = set(self.here.router_names)
        for server, agent in self.agents.items():
            started = agent.call("routing_start", reply_within=timeout + 10, fabric=self.spec.to_dict(),
                                 server=server, convergence_delay=self.delays[0], hold_down=self.delays[1])
            names |= set(started["routers"])
        self._thread = threading.Thread(target=self._merge_loop, name="routing-log-merge", daemon=True)
        self._thread.start()
        if not wait_until(lambda: names <= connected_since(self.routing_log, 0.0), timeout, interval=0.1):
            raise BuildError(f"the routing processes did not watch every router within {timeout:g} s: missing "
                             f"{sorted(names - connected_since(self.routing_log, 0.0))[:5]}")

    def running(self) -> bool:
        if not self.here.running():
            return False
        return all(agent.alive for agent in self.agents.values())

    def stop(self) -> None:
        self.here.stop()
        for agent in self.agents.values():
            if agent.alive:
                agent.call("routing_stop")
        self.merge()
        self._stop.set()

    # --- the one log ------------------------------------------------------------------
    def _merge_loop(self) -> None:
        while not self._stop.wait(MERGE_INTERVAL_S):
            try:
                self.merge()
            except Exception:   # an agent gone mid-run: running() says so, the run stops
                if not self.running():
                    return

    def merge(self) -> None:
        """Append every process's records not yet merged to the one log."""
        with self._lock:
            records = self._new_here()
            for server, agent in self.agents.items():
                if agent.alive:
                    records += self._new_remote(server, agent)
            if records:
                with open(self.routing_log, "a") as f:
                    f.writelines(json.dumps(record) + "\n" for record in sorted(records, key=lambda r: r["t_mono"]))

    def _new_here(self) -> list[dict]:
        text, self._read["here"] = read_new_lines(Path(self.here.routing_log), self._read["here"])
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def _new_remote(self, server: str, agent) -> list[dict]:
        new = agent.call("routing_log", offset=self._read[server])
        self._read[server] = new["next"]
        offset, bound = self.offsets[server]
        records = []
        for line in new["text"].splitlines():
            if line.strip():
                record = json.loads(line)
                record["t_mono"] = record["t_mono"] - offset     # on the runner's clock, +/- bound
                record["server"] = server
                records.append(record)
        return records

