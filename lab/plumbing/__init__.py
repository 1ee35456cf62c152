"""Session plumbing: one lab at a time (lock), the lab session built and torn down whatever
happens (session.py), cleanup after a crash (cleanup.py), and the several-servers side: the
runner's servers and each server's agent (servers.py, server_agent.py)."""
