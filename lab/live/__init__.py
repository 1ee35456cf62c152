"""Live measurement: what watches the fabric while a run goes on, with threads of its own
or calls to other servers. The conservation audit's snapshots of every switch's counters
(audit.py) and the fidelity monitor's CPU and plane-rate samples with the datapath
heartbeat (fidelity.py). What they measured is read afterwards by lab/analysis/."""
