"""Analysis: what a run measured, live and after. Live, during a run: the conservation audit
(audit.py), the fidelity monitor and heartbeat verdict (fidelity.py), CPU samples. After it:
the results files (results.py, run_config.py, the records), metrics (iterations.py,
failover.py, summary.py), the printed report (report.py) and the plots (plots.py)."""
