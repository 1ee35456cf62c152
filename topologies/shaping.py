"""The two-class shaper every shaped port of the lab gets: switch ports (under
the port program, topologies/port_program.py) and host NIC ports alike.

    htb 1: (default 1:20)
      1:1  rate R ceil R
        1:10 prio 0 rate 0.9R ceil R   <- control: ACK/NACK/PROBE(_REPLY), trimmed headers
        1:20 prio 1 rate 0.1R ceil R   <- DATA and everything else

A packet picks its class by skb->priority (htb reads it before any filter): a
switch port's program writes it per packet; a host's agent sends its control
datagrams from sockets whose SO_PRIORITY is CONTROL_PRIORITY. So an ACK waits
behind no queued DATA at either end, as a NIC's hardware ACKs do not (at the
lab's 10 Mb/s one queued jumbo frame is 6.6 ms: a third of an RTT).
"""

from __future__ import annotations

# tc classids; skb->priority carries one of them
CLASS_HI = 0x0001_0010   # "1:10"
CLASS_LO = 0x0001_0020   # "1:20"
CONTROL_PRIORITY = CLASS_HI


def priority_shaper(dev: str, rate_bps: int, burst_bytes: int, fifo: str) -> list[str]:
    """tc batch lines (after the port's old root qdisc is gone) that shape `dev`
    to `rate_bps` with the two classes above; `fifo` is each class's queue
    ("pfifo limit N" or "bfifo limit B"), sized by the caller never to drop."""
    r = int(rate_bps)
    lo = max(r // 10, 8000)   # DATA's guaranteed share; each class borrows up to R
    q = f"dev {dev}"
    bb = f"burst {burst_bytes} cburst {burst_bytes} quantum 1514"
    return [
        f"qdisc replace {q} root handle 1: htb default 20",
        f"class add {q} parent 1: classid 1:1 htb rate {r}bit ceil {r}bit {bb}",
        f"class add {q} parent 1:1 classid 1:10 htb rate {r - lo}bit ceil {r}bit prio 0 {bb}",
        f"class add {q} parent 1:1 classid 1:20 htb rate {lo}bit ceil {r}bit prio 1 {bb}",
        f"qdisc add {q} parent 1:10 handle 10: {fifo}",
        f"qdisc add {q} parent 1:20 handle 20: {fifo}",
    ]
