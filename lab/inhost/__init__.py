"""Code that runs inside a host's network namespace, one process per host:
the job and incast workers (each drives one MRC agent) and check's path probes."""
