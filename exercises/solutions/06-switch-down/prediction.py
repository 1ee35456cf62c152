"""Reference solution of exercise 06."""


def share_kept(switch: str, planes: int, t1s_per_plane: int, pairs: int) -> float:
    """Each plane carries what its narrowest stage allows: the pairs' NIC links (one per host) or the
    T0's uplinks (one per T1). Sum that over the planes with the switch down and with it up."""
    def plane_links(t1s_up: int) -> int:
        return min(pairs, t1s_up)

    clean = planes * plane_links(t1s_per_plane)
    if switch == "T0":
        # every test host of the first rack loses its link on that plane: the plane carries nothing
        faulted = 0
    elif switch == "T1":
        faulted = plane_links(t1s_per_plane - 1)
    else:
        raise ValueError(f"switch must be 'T0' or 'T1', got {switch!r}")
    return ((planes - 1) * plane_links(t1s_per_plane) + faulted) / clean


REASONING = """
A host has one NIC link per plane, so the test's capacity is planes links
per direction wherever the fabric is wider. A T0 down takes host 0's link on
that plane: one plane of eight, 7/8 left. A T1 down leaves its plane's other
T1, whose uplink carries a whole NIC link, and the test has only one host
per rack: the plane still carries all it could, nothing is lost. The fabric
loses one T1 of 16 (8 planes x 2), 1/16 of what the T0 uplinks can carry
across racks, but the test used only half of it; a rack-to-rack test (2
pairs here) fills every uplink and keeps 15/16. Left out: the few packets
lost before the senders stop using the dead routes (a dip of a bin at
most), the agents' CPU, and the rate's run-to-run noise.
"""
