"""The lab's shapers: every shaped port puts control packets ahead of DATA.

A switch port (under the port program, topologies/port_program/port_program.py):

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


# Lossless mode (docs/lossless.md): the DATA class's queue is a tbf (handle 20:, over its own
# bfifo) at the port's rate, and a pause sets that tbf to PAUSE_LEAK_SHARE of it. A tbf, not
# the htb class: htb keeps a class's token debt across a change, so the one frame a
# paused class still sent at a tiny rate held it for seconds after the pause (measured:
# a 67 s datapath stall); a tbf change starts from a full bucket. Not slower: a tbf change
# wakes nothing, so a resumed queue that gets no new packet restarts only when the timer the
# paused rate set fires (at 1/64 of the rate one jumbo frame's time: 57 ms at 80 Mb/s).
HOLD_HANDLE, HOLD_PARENT = 0x0020_0000, CLASS_LO   # tc handles "20:" and "1:20"
PAUSE_LEAK_SHARE = 1 / 64
# A tbf drops a frame larger than its burst: the hold's burst is at least a jumbo frame.
MIN_HOLD_BURST_BYTES = 9014
# A lossless host's control datagrams, told apart by their bytes (htb cannot read
# skb->priority 6, and this kernel has neither the prio qdisc nor the basic classifier):
# IPv6 next header UDP at byte 6; the MRC header's type at byte 49 (40 IPv6 + 8 UDP + 1),
# ACK 2 and NACK 3, PROBE 4 and PROBE_REPLY 5 (mrc_host/wire.py), two types per mask.
_CONTROL_MATCHES = ("match u8 17 0xff at 6 match u8 2 0xfe at 49", "match u8 17 0xff at 6 match u8 4 0xfe at 49")


HOST_HOLD_LIMIT_BYTES = 1000 * MIN_HOLD_BURST_BYTES


def switch_hold_limit(queue_limit: int) -> int:
    """A lossless switch port's DATA queue, bytes: far above what its virtual queue admits."""
    return 4 * queue_limit


def hold_params(rate_bps: int, burst_bytes: int, limit_bytes: int, paused: bool) -> dict:
    """The lossless DATA queue's tbf parameters (tc's names), running or paused."""
    rate = int(rate_bps * PAUSE_LEAK_SHARE) if paused else int(rate_bps)
    return {"rate": rate, "burst": max(burst_bytes, MIN_HOLD_BURST_BYTES), "limit": limit_bytes}


def switch_shaper(dev: str, rate_bps: int, burst_bytes: int, fifo: str, hold_limit: int | None = None) -> list[str]:
    """tc batch lines (after the port's old root qdisc is gone) that shape `dev`
    to `rate_bps` with the two classes above; `fifo` is each class's queue
    ("pfifo limit N" or "bfifo limit B"), sized by the caller never to drop.
    hold_limit: lossless mode: DATA's queue is a tbf the pause controller can hold
    (hold_params), over a bfifo of this many bytes."""
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
        f"qdisc add {q} parent 1:20 handle 20: " + (fifo if hold_limit is None else "tbf rate {rate}bit burst {burst} "
                                                  "limit {limit}".format(**hold_params(r, burst_bytes, hold_limit, False))),
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


def lossless_host_shaper(dev: str, rate_bps: int, burst_bytes: int) -> list[str]:
    """A lossless fabric's host NIC port: the switch ports' two htb classes, so a pause can
    hold the DATA class (1:20) while ACKs, NACKs and probes (1:10, picked by their bytes) go
    on, as PFC pauses one priority. Each class holds 1000 frames, a NIC port's txqueuelen."""
    q = f"dev {dev}"
    return switch_shaper(dev, rate_bps, burst_bytes, "pfifo limit 1000", HOST_HOLD_LIMIT_BYTES) + [
        f"filter add {q} parent 1: protocol ipv6 prio 1 u32 {match} flowid 1:10" for match in _CONTROL_MATCHES]
