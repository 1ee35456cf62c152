"""The srv6 data plane: kernel IPv6 routers, uSID source routes (topologies/srv6/dataplane.py, docs/srv6.md)."""
