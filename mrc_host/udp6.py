"""Zero UDP checksums over IPv6 (RFC 6935), for the srv6 data plane.

Each router on a uSID route shifts the destination address, so a checksum the
sender computed over the first address fails at the receiver: every socket on
srv6 routes sends with checksum 0 and accepts checksum 0. Python's socket
module does not name these options (linux/udp.h).
"""

from __future__ import annotations

import socket

UDP_NO_CHECK6_TX, UDP_NO_CHECK6_RX = 101, 102


def zero_checksums(sock: socket.socket, send: bool = True, receive: bool = True) -> socket.socket:
    """Make `sock` send checksum 0 (`send`) and accept checksum 0 (`receive`); returns it."""
    if send:
        sock.setsockopt(socket.SOL_UDP, UDP_NO_CHECK6_TX, 1)
    if receive:
        sock.setsockopt(socket.SOL_UDP, UDP_NO_CHECK6_RX, 1)
    return sock
