"""One rank of a job (a collective of mrc_host/collectives.py), run by the job
runner inside a host's namespace.

    python -m lab.inhost.jobworker CONFIG.json

Talks to the runner by lines on stdin/stdout, so that iterations are
synchronous across ranks as in training (iteration k+1 starts on every rank
when all finished k):

    worker: READY
    runner: ITER <k>        worker: DONE <k> <start> <end> <verified 0|1>
    runner: STOP            worker: BYE   (counters written to the stats file)

Between iterations the agent keeps serving the network (late ACKs,
probes, retransmissions of others): lab/inhost/workerloop.py.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from lab.inhost.workerloop import CommandFailed, serve
from mrc_host.agent import Agent, AgentConfig
from mrc_host.collectives import COLLECTIVES, CollectiveError, rank_input


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        config = json.load(f)
    job = config["job"]
    agent = Agent(AgentConfig.from_dict(config["agent"]))
    kind = COLLECTIVES[job["collective"]]
    collective = kind(agent, job["ranks"], job["count"])

    prepared: dict[int, tuple] = {}   # iteration -> (input, expected result)

    def prepare(k: int) -> tuple:
        if k not in prepared:
            prepared.clear()
            prepared[k] = (rank_input(job["seed"], k, collective.rank, job["count"]),
                           kind.reference(job["seed"], k, collective.rank, collective.n, job["count"]))
        return prepared[k]

    answered = -1   # the last iteration answered

    def iteration(args: list[str]) -> str:
        nonlocal answered
        k = int(args[0])
        data, expected = prepare(k)
        start = time.monotonic()
        try:
            result = collective.run(data, k)
        except CollectiveError as exc:
            raise CommandFailed(str(exc)) from None
        end = time.monotonic()
        answered = k
        # bit for bit (as integers: no copies): the inputs are exact in float32, so any
        # difference is a corruption
        same = result.shape == expected.shape and np.array_equal(result.view(np.uint32), expected.view(np.uint32))
        return f"DONE {k} {start:.6f} {end:.6f} {int(same)}"

    # each iteration's input and reference are made before READY or while the runner waits for
    # the other ranks, not after its ITER: that would put them on the clock of every iteration
    prepare(0)
    return serve(agent, {"ITER": iteration}, between=lambda: prepare(answered + 1))


if __name__ == "__main__":
    sys.exit(main())
