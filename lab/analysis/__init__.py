"""Analysis: reading what a run measured, after it, from records in memory or the results
directory, with no thread and no server. The results files and their typed records
(results.py, run_config.py, partial.py, the *_record.py modules), the figures by concern
(iterations.py, failover.py, path_retirement.py, crossing.py, counters.py, cpu_samples.py,
collective_bandwidth.py, summary.py), the fault sentences and notes (fault_text.py,
fault_notes.py), the printed report (report.py) and the plots (plots.py). What measures
during a run is in lab/live/."""
