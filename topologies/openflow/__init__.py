"""The OpenFlow data plane: Open vSwitch switches, static tables from the
os-ken controller (topologies/openflow/dataplane.py)."""
