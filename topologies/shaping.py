"""The lab's shapers: every shaped port puts control packets ahead of DATA.

A switch port (under the port program, topologies/port_program.py):

    htb 1: (default 1:20)
      1:1  rate R ceil R
        1:10 prio 0 rate 0.9R ceil R   <- control: ACK/NACK/PROBE(_REPLY), trimmed headers
        1:20 prio 1 rate 0.1R ceil R   <- DATA and everything else

the program writing each packet's class into skb->priority (htb reads it
before any filter). A host NIC port:

    tbf 1: rate R
      pfifo_fast 10:   band 0 <- skb->priority CONTROL_PRIORITY; band 1 <- the rest

the agent sending its control datagrams from sockets at CONTROL_PRIORITY. So
an ACK waits behind no queued DATA at either end, as a NIC's hardware ACKs do
not (at the lab's 10 Mb/s one queued jumbo frame is 6.6 ms: a third of an
RTT). A host keeps a tbf for its DATA: an htb there delayed each plane's DATA
unevenly enough to reorder the spray past the sender's reorder window
(`lab/run.py run` on the paper's interleaved srv6 all-reduce: hundreds of
needless retransmissions a run, none with the tbf).
"""

from __future__ import annotations

# tc classids; skb->priority carries one of them
CLASS_HI = 0x0001_0010   # "1:10"
CLASS_LO = 0x0001_0020   # "1:20"
# A host NIC's tbf holds a pfifo_fast (built into every kernel, where the prio
# qdisc is a module some kernels lack), whose default priomap puts
# skb->priority 6 (TC_PRIO_INTERACTIVE, settable without privileges) in band 0,
# ahead of priority 0 (band 1), where DATA and everything else goes.
CONTROL_PRIORITY = 6


def switch_shaper(dev: str, rate_bps: int, burst_bytes: int, fifo: str) -> list[str]:
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


def host_shaper(dev: str, rate_bps: int, burst_bytes: int) -> list[str]:
    """A host NIC port's shaper: a tbf at `rate_bps` over a pfifo_fast, control
    datagrams (skb->priority CONTROL_PRIORITY) ahead of everything else. Each
    band holds the port's txqueuelen packets (1000), far more than the sender's
    socket buffer lets in: it blocks first, as a NIC back-pressures. (tbf
    requires a limit of its own; with a child qdisc it goes unused.)"""
    q = f"dev {dev}"
    return [
        f"qdisc replace {q} root handle 1: tbf rate {int(rate_bps)}bit burst {burst_bytes} limit {burst_bytes}",
        f"qdisc add {q} parent 1:1 handle 10: pfifo_fast",
    ]
