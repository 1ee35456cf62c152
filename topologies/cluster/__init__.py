"""The fabric over several servers (docs/cluster.md), whatever the data plane: which server each
node runs on (placement.py), where a node's commands run (node_access.py), the runner's end of
each server's agent (server_channel.py; the agent itself is lab/plumbing/server_agent.py), ssh,
the patch namespace and the cables that cross between servers (remote.py, carrier_relay.py), and
their errors (server_errors.py). The srv6 routers on other servers are topologies/srv6/remote_nodes.py."""
