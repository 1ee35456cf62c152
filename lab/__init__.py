"""The lab's orchestration: `run.py` (the one entry point) and `cli.py` (its
commands), over packages by role: `scenario` (the run description and its
loader), `plumbing` (session, controller, lock, cleanup), `runners` (job,
incast, experiment, check, bench), `inhost` (what runs inside host
namespaces), `live` (the audit and the fidelity monitor, measuring during a run),
`analysis` (results, metrics, report, plots, read after it),
`paper` (the paper's experiments and their notebook) and `jupyter` (the
notebook command and helpers)."""
