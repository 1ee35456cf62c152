"""The run description: a Scenario (fabric, job, transports, faults) and the loader
that reads, checks and expands a scenario file into one (docs/scenarios.md)."""
