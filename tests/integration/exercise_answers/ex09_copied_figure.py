"""Exercise 09, a known-wrong answer: the script runs the right jobs but writes the figure copied from
another seed's run (seed 3: 2 % loss, 1 MB per rank, measured on srv6), not the one its own jobs
measured. The grader's figure from the recorded jobs differs: it must FAIL."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lab.scenario.record import buffer_bytes_from_mb  # noqa: E402

WRITEUP = "../../../exercises/solutions/09-capstone/writeup.md"
COPIED = {"loss_rate": 0.02, "buffer_mb": 1, "loss_free_efficiency": 0.9701255821430266,
          "lossy_efficiency": 0.8460368848573603, "kept": 0.8720900679564063, "verdict": "different shape"}


def reproduce(lab, params: dict, out) -> None:
    job = {"buffer_bytes": buffer_bytes_from_mb(params["buffer_mb"]), "iterations": params["iterations"]}
    lab.run("loss-free", **job)
    with lab.nic_loss(params["loss_rate"]):
        lab.run("lossy", **job)
    (out / "figure.json").write_text(json.dumps(COPIED))
    fig, ax = plt.subplots()
    ax.bar(["loss-free", "lossy"], [COPIED["loss_free_efficiency"], COPIED["lossy_efficiency"]])
    fig.savefig(out / "figure.png")
    plt.close(fig)
