"""One rank of a job, run by the job runner inside a host's namespace.

    python -m lab.jobworker CONFIG.json

Talks to the runner by lines on stdin/stdout, so that iterations are
synchronous across ranks as in training (iteration k+1 starts on every rank
when all finished k):

    worker: READY
    runner: ITER <k>        worker: DONE <k> <start> <end> <verified 0|1>
    runner: STOP            worker: BYE   (counters written to the stats file)

Between iterations the agent keeps serving the network (late ACKs,
probes, retransmissions of others).
"""

from __future__ import annotations

import json
import select
import sys
import time

import numpy as np

from mrc_host.agent import Agent, AgentConfig
from mrc_host.collectives import CollectiveError, RingAllReduce, rank_input, reference_sum


def read_command(agent: Agent) -> str:
    """Serve the network until a line arrives on stdin."""
    stdin = sys.stdin
    while True:
        ready, _, _ = select.select([stdin], [], [], 0)
        if ready:
            return stdin.readline().strip()
        agent.poll(0.002)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        config = json.load(f)
    job = config["job"]
    agent = Agent(AgentConfig.from_dict(config["agent"]))
    collective = RingAllReduce(agent, job["ring"], job["count"])
    print("READY", flush=True)
    try:
        while True:
            command = read_command(agent)
            if command.startswith("ITER"):
                iteration = int(command.split()[1])
                data = rank_input(job["seed"], iteration, collective.rank, job["count"])
                expected = reference_sum(job["seed"], iteration, collective.n, job["count"])
                start = time.monotonic()
                try:
                    result = collective.run(data, iteration)
                    verified = bool(np.array_equal(result, expected))
                except CollectiveError as exc:
                    print(f"ERROR {exc}", flush=True)
                    return 1
                end = time.monotonic()
                print(f"DONE {iteration} {start:.6f} {end:.6f} {int(verified)}", flush=True)
            elif command in ("STOP", ""):
                break
            else:
                print(f"ERROR unknown command {command!r}", flush=True)
                return 1
    finally:
        agent.close()  # writes the final counters to the stats file
    print("BYE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
