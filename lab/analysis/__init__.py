"""Analysis: conservation audit and fidelity monitor (measured during a run),
results files, metrics, the printed report and the plots."""
