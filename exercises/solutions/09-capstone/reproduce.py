"""Exercise 09's reference: Fig. 16's MRC under random loss at every NIC, on the grader's fabric.
A loss-free all-reduce, then one with params["loss_rate"] dropped at every NIC receive; the
efficiency of each median iteration, the share kept, the paper's verdict; one bar figure."""

import json
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lab.analysis.collective_bandwidth import bandwidth  # noqa: E402
from lab.paper.thresholds import PAPER_LITTLE_IMPACT  # noqa: E402
from lab.paper.verdict import shape  # noqa: E402
from lab.scenario.record import buffer_bytes_from_mb  # noqa: E402

WRITEUP = "writeup.md"


def efficiency(run, lab, buffer_bytes: int) -> float:
    return bandwidth(statistics.median(run.durations), ranks=lab.spec.hosts, buffer_bytes=buffer_bytes,
                     planes=lab.spec.planes, link_mbps=lab.spec.link_mbps)["efficiency"]


def reproduce(lab, params: dict, out) -> None:
    p, buffer_bytes = params["loss_rate"], buffer_bytes_from_mb(params["buffer_mb"])
    job = {"buffer_bytes": buffer_bytes, "iterations": params["iterations"]}
    free = lab.run("loss-free", **job)
    with lab.nic_loss(p):
        lossy = lab.run(f"{p * 100:g} % loss", **job)
    assert free.verified and lossy.verified, "a run did not verify"
    e_free, e_lossy = efficiency(free, lab, buffer_bytes), efficiency(lossy, lab, buffer_bytes)
    kept = e_lossy / e_free
    verdict, _why = shape(kept >= PAPER_LITTLE_IMPACT, f"kept {kept:.3f}")
    figure = {"loss_rate": p, "buffer_mb": params["buffer_mb"], "loss_free_efficiency": e_free,
              "lossy_efficiency": e_lossy, "kept": kept, "verdict": verdict}
    (out / "figure.json").write_text(json.dumps(figure, indent=2) + "\n")
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.bar(["loss-free", f"{p * 100:g} % loss"], [e_free, e_lossy], color=["tab:blue", "tab:orange"])
    ax.axhline(e_free * PAPER_LITTLE_IMPACT, ls="--", color="grey", label="paper: little impact (0.9 x loss-free)")
    ax.set_ylabel("efficiency (busbw / line rate)")
    ax.set_ylim(0, 1)
    ax.set_title(f"MRC all-reduce, {params['buffer_mb']} MB per rank: kept {kept:.2f}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figure.png")
    plt.close(fig)
