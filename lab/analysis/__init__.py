"""Analysis: conservation audit and fidelity monitor (measured during a run),
results files, metrics, the printed report and the plots; the MRC paper's
published figures and a `lab/run.py paper` run read back and drawn beside them."""
