"""Session plumbing: one lab at a time on a machine (lock.py), the lab session that resolves the
data plane, builds the fabric and tears it down whatever happens (session.py), removing what a
crashed run left (cleanup.py), and the several-servers side of a session: the runner's servers
(servers.py) and the agent each other server runs (server_agent.py; its runner's end is
topologies/cluster/server_channel.py)."""
