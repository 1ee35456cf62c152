"""Exercise 09, a known-wrong answer: the right jobs and the right share kept, but each run's figure
in the wrong unit: busbw in Mb/s, not the efficiency (busbw as a share of the fabric's line rate) the
row is judged in. It must FAIL on the two efficiencies."""

import json
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lab.analysis.collective_bandwidth import bandwidth  # noqa: E402
from lab.paper.thresholds import PAPER_LITTLE_IMPACT  # noqa: E402
from lab.paper.verdict import shape  # noqa: E402
from lab.scenario.record import buffer_bytes_from_mb  # noqa: E402

WRITEUP = "../../../exercises/solutions/09-capstone/writeup.md"


def busbw_mbps(run, spec, buffer_bytes: int) -> float:
    return bandwidth(statistics.median(run.durations), ranks=spec.hosts, buffer_bytes=buffer_bytes,
                     planes=spec.planes, link_mbps=spec.link_mbps)["busbw_mbps"]


def reproduce(lab, params: dict, out) -> None:
    buffer_bytes = buffer_bytes_from_mb(params["buffer_mb"])
    job = {"buffer_bytes": buffer_bytes, "iterations": params["iterations"]}
    free = lab.run("loss-free", **job)
    with lab.nic_loss(params["loss_rate"]):
        lossy = lab.run("lossy", **job)
    free_mbps, lossy_mbps = busbw_mbps(free, lab.spec, buffer_bytes), busbw_mbps(lossy, lab.spec, buffer_bytes)
    kept = lossy_mbps / free_mbps
    figure = {"loss_rate": params["loss_rate"], "buffer_mb": params["buffer_mb"], "loss_free_efficiency": free_mbps,
              "lossy_efficiency": lossy_mbps, "kept": kept,
              "verdict": shape(kept >= PAPER_LITTLE_IMPACT, "")[0]}
    (out / "figure.json").write_text(json.dumps(figure))
    fig, ax = plt.subplots()
    ax.bar(["loss-free", "lossy"], [free_mbps, lossy_mbps])
    ax.set_ylabel("busbw (Mb/s)")
    fig.savefig(out / "figure.png")
    plt.close(fig)
