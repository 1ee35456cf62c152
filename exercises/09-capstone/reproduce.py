"""Exercise 09: reproduce one row of `lab/run.py paper` with your own script. Grade it with:

    sudo .venv/bin/python exercises/09-capstone/grade.py exercises/09-capstone/reproduce.py

The row: Fig. 16's random loss at every NIC, MRC's part ("0.1 % loss has little impact": MRC keeps
at least 0.9 of its loss-free rate; lab/paper/loss.py, lab/paper/thresholds.py PAPER_LITTLE_IMPACT).

The grader calls reproduce(lab, params, out) on a fabric it built (2 planes x 10 Mb/s, h0 and h1 in
different racks), params = {"loss_rate": p, "buffer_mb": MB per rank, "iterations": n} drawn from a
seed you do not know. Your script:

- runs the jobs: `lab.run(label, **job)` runs one MRC ring all-reduce, `job` being JobSpec's
  fields (lab/runners/job.py: buffer_bytes, iterations, ...; `lab.spec` is the fabric's
  FabricSpec); it returns the run (exercises/grading.py Run: durations, median_s, verified,
  counters); `with lab.nic_loss(p): ...` drops p of what every NIC receives while the block runs
  (faults/port_faults.py NicLoss);
- writes out / "figure.png": your figure of the row;
- writes out / "figure.json": {"loss_rate", "buffer_mb", "loss_free_efficiency", "lossy_efficiency",
  "kept", "verdict"}: the efficiency of each (busbw / the fabric's line rate, of the median
  iteration; lab/analysis/collective_bandwidth.py bandwidth), the share of the loss-free rate kept,
  and the paper's verdict on it (lab/paper/verdict.py), as Python computed them (not rounded).

Then fill in writeup.md (WRITEUP below names it).
"""

WRITEUP = "writeup.md"


def reproduce(lab, params: dict, out) -> None:
    # runs nothing yet: write your experiment here
    pass
