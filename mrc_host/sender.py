"""Sending half of an MRC connection (sans-IO): spraying, SACK, retransmission.

Packets carry a per-connection PSN; a retransmission keeps its PSN (flag
RETX) so the receiver's cumulative ack and SACK bitmap fill the hole.

Loss detection, three ways, each a "loss without trim" for path health:
- SACK gap: every transmission gets a sequence number ``txseq``; when a
  transmission ``reorder_allowance`` later than an unacked one is acked, the
  unacked one is lost (RACK-like, in transmission order so retransmissions
  are judged against packets sent after them).
- RTO: the oldest unacked transmission is older than RTO (RFC 6298 SRTT /
  RTTVAR, clamped, doubled on each timeout, reset by the next RTT sample;
  Karn: no samples from retransmitted packets); one packet per timeout.
- Tail: nothing sent and nothing acked for max(TAIL_SRTTS x SRTT, SRTT + 4
  RTTVAR, ``tail_loss_min``) while packets are in flight (RACK-TLP's probe
  timeout, RFC 8985, above the agents' scheduling stalls): the newest of
  them is lost, once per such silence. A message's last packets have no
  later packet whose ACK could reveal a gap, and the RTO floor sits above
  the fabric's whole queueing bound (about 50 of NSCC's RTTs on the default
  fabric): a tail packet on a route that just failed would wait that long.
A trim NACK is congestion: the packet is resent at once, the path stays.
A loss without trim makes the packet's route suspect (path_health.py): no
packet, retransmissions included, goes on any EV of that route while
another route is usable. ACKs carry the peer's NIC port bitmap: the EVs of a
plane whose port is down at the peer are denied until it is up again.
Per-route send and ack times are kept in a RouteLog (routes.py).
Congestion control hears every ACK (RTT sample, ECN echo, whether the
window limited sending), every trim, and losses without trim only on routes
still in use; a Pacer (pacing.py) spreads transmissions over the SRTT, and
``next_deadline`` includes when the next paced packet may go.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from . import wire
from .cc_trace import CcTrace
from .congestion import CongestionControl
from .counters import Counters
from .events import WriteComplete
from .outgoing import GapLosses, OutMessage, OutPacket
from .pacing import UNPACED, Pacer
from .params import TransportParams
from .path_health import INF, R_GOOD, R_SUSPECT, USABLE, PathHealth
from .path_select import PathSelector
from .routes import RouteLog
from .rtt import RouteRtts, RttEstimator

_encode_data_header = wire.encode_data_header
_encode_probe = wire.encode_probe
_F_RETX, _F_LAST = wire.F_RETX, wire.F_LAST
REO_MULT_MAX = 16   # reorder window grows to at most 16 x its base/4 (and never past srtt)
EIFEL_RTT_SHARE = 0.8  # an ACK this soon after a retransmission (x min RTT) is the original's
TAIL_SRTTS = 2.0   # a silence at least this many SRTTs long with packets in flight declares the newest lost (RFC 8985)


RTO_LOG_ROWS = 100   # timeouts recorded in detail per connection (every one is counted)


class Sender:
    """Sends messages to one peer over many paths.

    conn_id: connection id carried in every packet
    paths: list of (ev, plane), index = pid
    params: TransportParams
    health, selector, cc: the connection's policies (health knows the routes)
    rtt: the connection's RttEstimator (shared with health: timers in RTTs)
    counters: Counters to update
    emit: callback for WriteComplete events
    """

    def __init__(self, conn_id: int, paths, params: TransportParams, health: PathHealth,
                 selector: PathSelector, cc: CongestionControl, counters: Counters,
                 emit: Callable, peer=None, rtt: RttEstimator | None = None):
        self.conn_id = conn_id
        self.paths = list(paths)
        self.path_index = {p: i for i, p in enumerate(self.paths)}
        self.params = params
        self.health = health
        self.selector = selector
        self.cc = cc
        self.c = counters
        self.emit = emit
        self.peer = peer
        self.payload_size = params.payload_size
        self.queue: deque[OutMessage] = deque()     # messages with bytes not yet segmented
        self.unacked: dict[int, OutPacket] = {}      # psn -> packet, sent and not acked
        self.sendq: deque = deque()                # (txseq, packet) in transmission order
        self.retxq: deque[OutPacket] = deque()       # packets declared lost, to resend
        self.inflight = 0                          # transmissions neither acked nor lost
        self.snd_nxt = 0                           # next PSN to assign
        self.snd_una = 0                           # lowest PSN not cumulatively acked
        self.txseq = 0
        self.max_acked_txseq = -1
        self.max_acked_sent = -1.0                 # send time of the latest-sent acked packet
        self.rack_rtt = 0.0                        # RTT of that packet
        self.reorder_deadline: float | None = None  # when the oldest suspect becomes lost
        self.reo_mult = 1                          # reorder window, in units of its base/4 (reorder_window)
        self.gap_losses = GapLosses()
        self.msg_ids = wire.MessageIds()
        self.rtt = rtt or RttEstimator(params.rto_initial, params.rto_min, params.rto_max,
                                       params.rto_granularity, params.rto_min_rtts)
        self.route_of_pid = health.route_of_pid
        self.routes = health.routes                  # their state is read on every ACK (hot path)
        self.route_rtts = RouteRtts(len(health.route_keys), self.rtt)
        self.route_log = RouteLog(health.route_keys)
        self.peer_ports = wire.ALL_PORTS_UP          # the peer's NIC port bitmap, from its ACKs
        self.pkts_sent = [0] * len(self.paths)     # per path
        self.pkts_acked = [0] * len(self.paths)
        self.pacer = Pacer.for_params(params, len({plane for _, plane in self.paths}))
        self.pace_at: float | None = None          # when the pacer lets the next packet go
        self.cc_trace = CcTrace()
        self.rto_log: list[list] = []    # the first RTO_LOG_ROWS timeouts: [t, psn, waited, rto, srtt, resends, (ev, plane)]
        self.window_limited = False                # as of the last fill: the window, not the application or the NIC, held data back
        self.last_progress = 0.0                   # the last transmission or ACK
        self.tail_probed = False                   # a tail loss was declared since the last ACK (one per silence)

    # --- API ---------------------------------------------------------------------------------
    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        if len(data) == 0:
            raise ValueError("empty message")
        msg_id = self.msg_ids.take(msg_id)
        self.queue.append(OutMessage(msg_id, memoryview(data).cast("B"), remote_offset))
        return msg_id

    @property
    def idle(self) -> bool:
        return not self.queue and not self.unacked

    @property
    def srtt(self) -> float | None:
        return self.rtt.srtt

    @property
    def rto(self) -> float:
        """The RTO of the last RTT sample, before backoff (see current_rto)."""
        return self.rtt.rto

    # --- sending ----------------------------------------------------------------------------
    def fill(self, now: float, out: list, keepalive: bool = False) -> None:
        """Append (datagram, ev, plane) for probes, retransmissions and new data.
        ``keepalive``: the connection only receives: keep its reverse routes probed."""
        health = self.health
        if keepalive or health.probing():
            for pid, seq in health.probes_due(now, keepalive):
                ev, plane = self.paths[pid]
                out.append((_encode_probe(False, 0, ev, plane, self.conn_id, seq,
                                          int(now * 1e9) & 0xFFFFFFFFFFFFFFFF), ev, plane))
                self.c.probes_sent += 1
        health.expire(now)
        if self.route_log.idle_since is not None and (self.queue or self.retxq):
            self.route_log.busy_from(now)   # data written (or declared lost) since the last fill
        cwnd = self.cc.cwnd
        srtt = self.rtt.srtt
        pacer = self.pacer
        allowed = pacer.allowance(now, cwnd, srtt)
        # held by the NIC's line rate (never when unpaced: the default path pays one comparison)
        at_line = allowed != UNPACED and pacer.line_bound(cwnd, srtt)
        if at_line and allowed < pacer.batch and allowed < self._waiting(cwnd, pacer.batch):
            allowed = 0   # at line rate a whole batch leaves at once: one wakeup per batch, not one per ACK
        sent = self._fill_retransmissions(now, out, cwnd, allowed)
        if sent < allowed:
            sent += self._fill_new_data(now, out, cwnd, allowed - sent)
        pacer.on_sent(sent, now, cwnd, srtt)
        has_data = bool(self.queue or self.retxq)
        if not has_data and self.route_log.idle_since is None:
            self.route_log.idle_from(now)
        paced = has_data and sent == allowed and self.inflight < cwnd
        # a window with room and nothing waiting (the application limits us), or data
        # held back only by the NIC's line rate, is no reason to grow the window
        self.window_limited = (has_data or self.inflight >= cwnd) and not (paced and at_line)
        self.pace_at = pacer.release_time(now, cwnd, srtt, self._waiting(cwnd, pacer.batch)) if paced else None

    def _waiting(self, cwnd: float, most: int) -> int:
        """Packets that could leave now if the pacer allowed, counted up to ``most``."""
        waiting = len(self.retxq)
        for msg in self.queue:
            if waiting >= most:
                break
            waiting += -(-(msg.length - msg.next_off) // self.payload_size)
        room = int(cwnd - self.inflight)
        return min(waiting, room, most)

    def _fill_retransmissions(self, now: float, out: list, cwnd: float, allowed: int) -> int:
        """Resend packets declared lost, up to the window and ``allowed``; how many went."""
        select = self.selector.select
        retxq = self.retxq
        sent = 0
        while retxq and self.inflight < cwnd and sent < allowed:
            pkt = retxq[0]
            if pkt.acked:          # acked after being declared lost
                retxq.popleft()
                continue
            pid = select(pkt.lost_pid)
            if pid is None:
                break
            retxq.popleft()
            pkt.lost = False
            pkt.retx += 1
            self.c.retransmits += 1
            if self.route_of_pid[pid] == self.route_of_pid[pkt.lost_pid]:
                self.c.forced_reuses += 1
            self._transmit(pkt, pid, now, _F_RETX, out)
            sent += 1
        return sent

    def _fill_new_data(self, now: float, out: list, cwnd: float, allowed: int) -> int:
        """Segment queued messages into new packets, up to the window and ``allowed``."""
        select = self.selector.select
        queue = self.queue
        psize = self.payload_size
        sent = 0
        while queue and self.inflight < cwnd and sent < allowed:
            pid = select()
            if pid is None:
                break
            msg = queue[0]
            off = msg.next_off
            length = msg.length - off
            if length > psize:
                length = psize
            msg.next_off = off + length
            last = msg.next_off == msg.length
            if last:
                queue.popleft()
            psn = self.snd_nxt
            self.snd_nxt = (psn + 1) & 0xFFFFFFFF
            pkt = OutPacket(psn, msg, off, length, last)
            msg.unacked += 1
            self.unacked[psn] = pkt
            self._transmit(pkt, pid, now, 0, out)
            sent += 1
        return sent

    def _transmit(self, pkt: OutPacket, pid: int, now: float, flags: int, out: list) -> None:
        ev, plane = self.paths[pid]
        msg = pkt.msg
        if pkt.last:
            flags |= _F_LAST
        off = pkt.off
        out.append((_encode_data_header(flags, ev, plane, self.conn_id, msg.msg_id, pkt.psn,
                                        msg.remote_offset + off, msg.length, pkt.length)
                    + msg.data[off:off + pkt.length], ev, plane))
        pkt.pid = pid
        pkt.sent = now
        txseq = self.txseq
        pkt.txseq = txseq
        self.txseq = txseq + 1
        self.sendq.append((txseq, pkt))
        self.inflight += 1
        self.pkts_sent[pid] += 1
        self.route_log.on_send(self.route_of_pid[pid], now)
        self.last_progress = now
        c = self.c
        c.data_sent += 1
        c.data_bytes_sent += pkt.length

    # --- acks ----------------------------------------------------------------------------------
    def on_ack(self, flags: int, ev: int, plane: int, cum: int, sack: int, acked_psn: int,
               now: float, ports: int = wire.ALL_PORTS_UP) -> None:
        c = self.c
        c.acks_received += 1
        self.last_progress = now
        self.tail_probed = False
        if ports != self.peer_ports:
            self._peer_ports_changed(ports, now)
        if ((cum - self.snd_una) & 0xFFFFFFFF) > ((self.snd_nxt - self.snd_una) & 0xFFFFFFFF):
            if ((self.snd_una - cum) & 0xFFFFFFFF) >= 0x80000000:
                c.dropped += 1  # acks something never sent: bogus
                return
            # An older ACK overtaken by a newer one (ACKs come back over every
            # plane, so they reorder): its cumulative part is stale, but its
            # SACK bits and acked PSN are still news.
            sack_base = cum + 1
            cum = self.snd_una
        else:
            sack_base = cum + 1
        rtt_sample = self._rtt_samples(self.unacked.get(acked_psn), ev, plane, now)
        newly = self._take_acked(cum, sack, sack_base, acked_psn, now)
        if flags & wire.F_DUPLICATE:
            self._duplicate_arrival(acked_psn)
        ecn = bool(flags & wire.F_ECN_ECHO)
        if ecn:
            c.ecn_echoes += 1
            pid = self.path_index.get((ev, plane))
            if pid is not None:
                self.health.on_ecn_echo(pid, now)
        cc = self.cc
        cc.on_ack_feedback(newly, now, rtt_sample, ecn, self.rtt.srtt or self.rtt.rto, self.window_limited)
        if now >= self.cc_trace.next_at:   # checked here: the ACK path skips the call between rows
            self.cc_trace.record(now, cc.cwnd, self.rtt.srtt, self.rtt.min_rtt, self.pacer.interval(cc.cwnd, self.rtt.srtt))
        self._detect_sack_losses(now)

    def _peer_ports_changed(self, ports: int, now: float) -> None:
        """The peer's NIC port bitmap changed: deny the planes whose port is down at the peer."""
        self.peer_ports = ports
        planes = {p for _ev, p in self.paths}
        self.health.set_ports_down("peer_port_down", [p for p in planes if not (ports >> p) & 1], now)

    def _rtt_samples(self, pkt: OutPacket | None, ev: int, plane: int, now: float) -> float | None:
        """The RTT samples an ACK of ``pkt`` (echoing path ``ev``, ``plane``) gives: the
        connection's and its route's; the connection's sample, or None."""
        if pkt is None:
            return None
        if pkt.retx == 0 and not pkt.lost:
            rtt_sample = now - pkt.sent        # Karn: first transmissions only
            self.rtt.sample(rtt_sample)
            self.rtt.reset_backoff()
            self.route_rtts.sample(self.route_of_pid[pkt.pid], rtt_sample)   # one per ACK, as for the SRTT
            return rtt_sample
        if pkt.gap_loss and self.path_index.get((ev, plane)) == pkt.lost_pid \
                and (pkt.pid != pkt.lost_pid or pkt.retx == 0):
            # the copy a SACK gap gave up on answered (the ACK echoes its path, which
            # the retransmission did not take): its route's RTT, which a route whose
            # every packet looks lost would otherwise never learn
            self.route_rtts.sample(self.route_of_pid[pkt.lost_pid], now - pkt.lost_sent)
        return None

    def _take_acked(self, cum: int, sack: int, sack_base: int, acked_psn: int, now: float) -> int:
        """Mark acked every packet below ``cum``, in the SACK bitmap from ``sack_base``,
        and ``acked_psn``; how many were newly acked."""
        unacked = self.unacked
        newly = 0
        acked = self._acked
        if cum != self.snd_una:
            psn = self.snd_una
            while psn != cum:
                pkt = unacked.pop(psn, None)
                if pkt is not None:
                    acked(pkt, now)
                    newly += 1
                psn = (psn + 1) & 0xFFFFFFFF
            self.snd_una = cum
        while sack:
            low = sack & -sack
            sack ^= low
            pkt = unacked.pop((sack_base + low.bit_length() - 1) & 0xFFFFFFFF, None)
            if pkt is not None:
                acked(pkt, now)
                newly += 1
        pkt = unacked.pop(acked_psn, None)
        if pkt is not None:
            acked(pkt, now)
            newly += 1
        return newly

    def _duplicate_arrival(self, psn: int) -> None:
        """The peer got ``psn`` twice (a D-SACK): its SACK-gap loss was reordering."""
        lost = self.gap_losses.proven_needless(psn)
        if lost is not None:
            lost_pid, lost_sent = lost
            self.c.spurious_losses += 1
            self.route_log.on_delivered_after_all(self.route_of_pid[lost_pid], lost_sent)
            self._reordering(lost_pid)

    def _acked(self, pkt: OutPacket, now: float) -> None:
        pkt.acked = True
        if pkt.lost:
            self._spurious(pkt)
        else:
            self.inflight -= 1
            # acked sooner after its retransmission than any round trip takes: the
            # original arrived after all (Eifel, RFC 3522, by timing)
            if pkt.retx and pkt.gap_loss and now - pkt.sent < EIFEL_RTT_SHARE * (self.rtt.min_rtt or 0.0):
                self._spurious(pkt)
        if pkt.txseq > self.max_acked_txseq:
            self.max_acked_txseq = pkt.txseq
        if pkt.retx == 0 and pkt.sent >= self.max_acked_sent:
            self.max_acked_sent = pkt.sent
            self.rack_rtt = now - pkt.sent
        self.pkts_acked[pkt.pid] += 1
        rid = self.route_of_pid[pkt.pid]
        self.route_log.on_ack(rid, now)
        if self.routes[rid].state == R_SUSPECT:
            self.health.on_route_ack(rid, pkt.sent, now)
        msg = pkt.msg
        msg.unacked -= 1
        if msg.unacked == 0 and msg.next_off == msg.length:
            self.c.messages_sent += 1
            self.emit(WriteComplete(self.conn_id, msg.msg_id, msg.length, self.peer))

    def _spurious(self, pkt: OutPacket) -> None:
        """``pkt`` was declared lost and arrived anyway."""
        self.c.spurious_losses += 1
        if pkt.dropped:
            pkt.dropped = False
            self.route_log.on_delivered_after_all(self.route_of_pid[pkt.lost_pid], pkt.lost_sent)
        if pkt.gap_loss:
            pkt.gap_loss = False
            self.gap_losses.proven_needless(pkt.psn)
            self._reordering(pkt.lost_pid)

    def _reordering(self, lost_pid: int) -> None:
        """A SACK-gap loss on ``lost_pid`` was reordering: widen the reorder window
        (RACK) and tell path health it was no loss."""
        self.health.on_spurious_gap(lost_pid)
        if self.reo_mult < REO_MULT_MAX:
            self.reo_mult += 1

    def reorder_window(self) -> float:
        """How long past the RTT of a later-sent packet that was acked an
        earlier packet may still arrive before it counts as lost (RACK, RFC
        8985): mult x base/4, at most srtt. Spraying sends back-to-back
        packets over paths with different queues, so "acked N packets later"
        alone mistakes reordering for loss. RACK's base is min_rtt; here it is
        at least srtt/2, because when queueing dominates the RTT (an ACK that
        met empty queues sets a min_rtt of a millisecond beside an srtt of
        twenty) the routes' queues, not the path length, set the reordering."""
        min_rtt, srtt = self.rtt.min_rtt, self.rtt.srtt
        if min_rtt is None:
            return 0.0
        base = min_rtt if srtt is None or min_rtt > srtt / 2 else srtt / 2
        w = self.reo_mult * base / 4
        return w if srtt is None or w < srtt else srtt

    def _detect_sack_losses(self, now: float) -> None:
        """A packet is lost when one sent `reorder_allowance` transmissions
        later was acked, and it is overdue: older than the RTT of the latest
        acked packet plus the reorder window, and than its own route's overdue
        time (``RouteRtts.sample``, rtt.py). RACK's one window cannot tell a route
        whose queue is deeper from a loss: when planes come back beside loaded
        ones, packets on the empty planes overtake the earlier ones queued
        behind their planes' backlog by several RTTs of the empty ones. Before
        that, once it is overdue on its own route's RTT, its route becomes
        suspect (``_suspect_overdue``)."""
        loss_at = None
        limit = self.max_acked_txseq - self.params.reorder_allowance
        wait = self.rack_rtt + self.reorder_window()
        sendq, after, route_of_pid = self.sendq, self.route_rtts.overdue_after, self.route_of_pid
        while sendq and sendq[0][0] < limit:
            txseq, pkt = sendq[0]
            if pkt.acked or pkt.lost or pkt.txseq != txseq:
                sendq.popleft()
                continue
            route_wait = after[route_of_pid[pkt.pid]]
            if route_wait == INF:
                # no RTT of its own yet (its first packets may all look lost and give no
                # sample, Karn): as long as the slowest route that has one
                route_wait = max((a for a in after if a != INF), default=0.0)
            due = pkt.sent + (route_wait if route_wait > wait else wait)
            if now < due:
                loss_at = due                      # not overdue yet: look again then
                break
            sendq.popleft()
            self.c.sack_losses += 1
            pkt.gap_loss = True
            self.gap_losses.add(pkt.psn, pkt.pid, pkt.sent)
            self._lost(pkt, now, "sack_gap")
        suspect_at = self._suspect_overdue(now)
        self.reorder_deadline = loss_at if suspect_at is None or (loss_at is not None and loss_at < suspect_at) \
            else suspect_at

    def _suspect_overdue(self, now: float) -> float | None:
        """Routes of overdue packets (``RouteRtts.sample``; a packet sent after
        each was acked, so the peer is alive) become suspect. Returns when to
        look again (None: only a new ACK can tell). Packets are in send order:
        the scan stops at the first one younger than the shortest overdue time
        of any route, so an ACK costs a look at the few packets already late."""
        after = self.route_rtts.overdue_after
        soonest = min(after)
        if soonest == INF:
            return None                      # no route has an RTT yet
        newest = self.max_acked_sent
        routes, route_of_pid = self.routes, self.route_of_pid
        due = None
        for txseq, pkt in self.sendq:
            if pkt.sent >= newest:
                break                        # nothing sent after it was acked (yet)
            if pkt.acked or pkt.lost or pkt.txseq != txseq:
                continue
            if now < pkt.sent + soonest:
                at = pkt.sent + soonest
                return at if due is None or at < due else due
            rid = route_of_pid[pkt.pid]
            if routes[rid].state != R_GOOD:
                continue
            at = pkt.sent + after[rid]
            if now >= at:
                self.health.on_overdue(pkt.pid, pkt.sent, now)
            elif due is None or at < due:
                due = at
        return due

    def _lost(self, pkt: OutPacket, now: float, reason: str) -> None:
        pkt.lost = True
        pkt.lost_pid = pkt.pid
        pkt.lost_sent = pkt.sent
        self.inflight -= 1
        if reason != "sack_gap":
            pkt.gap_loss = False
        pkt.dropped = reason != "trim"
        if pkt.dropped:
            self.route_log.on_drop(self.route_of_pid[pkt.pid], pkt.sent)
        if reason == "trim":
            self.retxq.appendleft(pkt)
            self.health.on_trim(pkt.pid, now)
            self.cc.on_trim(now, self.rtt.srtt or self.rtt.rto)
        else:
            self.retxq.append(pkt)
            # a route already out of use (suspect, retired, denied) lost this packet to the
            # failure it was already blamed for: that is not news for the window
            in_use = self.health.state[pkt.pid] in USABLE
            self.health.on_loss(pkt.pid, now, reason, pkt.sent)
            if in_use:
                self.cc.on_timeout(now, self.rtt.srtt or self.rtt.rto)

    def on_nack(self, psn: int, reason: int, now: float) -> None:
        self.c.nacks_received += 1
        pkt = self.unacked.get(psn)
        if pkt is None or pkt.lost:
            return
        # NACK OTHER (receiver could not take it) is not a path failure either
        self._lost(pkt, now, "trim")

    def on_probe_reply(self, ev: int, plane: int, seq: int, now: float) -> None:
        self.c.probe_replies_received += 1
        self.health.on_probe_reply(seq, now)

    # --- timers ----------------------------------------------------------------------------------
    def _oldest(self):
        sendq = self.sendq
        while sendq:
            txseq, pkt = sendq[0]
            if pkt.acked or pkt.lost or pkt.txseq != txseq:
                sendq.popleft()
                continue
            return pkt
        return None

    def current_rto(self) -> float:
        """RTO with the exponential backoff of consecutive timeouts, capped at rto_max."""
        return self.rtt.current()

    def timer(self, now: float) -> None:
        if self.reorder_deadline is not None and now >= self.reorder_deadline:
            self._detect_sack_losses(now)
        # RFC 6298 5.4: an RTO declares the oldest packet lost, not the whole
        # window: when the peer was only descheduled its ACKs clear the rest
        # the moment it runs again, and a dead route's other packets are found
        # by SACK gaps on the routes that work
        pkt = self._oldest()
        if pkt is not None and now >= pkt.sent + self.rtt.current():
            self.sendq.popleft()
            self.c.timeouts += 1
            if len(self.rto_log) < RTO_LOG_ROWS:
                self.rto_log.append([round(now, 6), pkt.psn, round(now - pkt.sent, 6), round(self.rtt.current(), 6),
                                     self.rtt.srtt and round(self.rtt.srtt, 6), pkt.retx, list(self.paths[pkt.pid])])
            self._lost(pkt, now, "rto")
            self.rtt.on_timeout()
        tail_at = self._tail_deadline()
        if tail_at is not None and now >= tail_at:
            self._declare_tail_lost(now)
        self.health.expire(now)

    def _tail_deadline(self) -> float | None:
        """When the silence with packets in flight becomes a tail loss (None: no such wait)."""
        srtt = self.rtt.srtt
        if not self.inflight or self.tail_probed or not srtt:
            return None
        wait = max(TAIL_SRTTS * srtt, srtt + 4 * self.rtt.rttvar, self.params.tail_loss_min)
        return self.last_progress + wait

    def _declare_tail_lost(self, now: float) -> None:
        """The newest packet in flight is lost: resent (on another route: its own becomes
        suspect), and its ACK lets RACK judge the packets before it."""
        self.tail_probed = True
        for txseq, pkt in reversed(self.sendq):
            if not (pkt.acked or pkt.lost or pkt.txseq != txseq):
                self.c.tail_losses += 1
                self._lost(pkt, now, "tail")
                return

    def next_deadline(self, keepalive: bool = False) -> float | None:
        pkt = self._oldest()
        t = self.health.next_deadline(keepalive)
        for r in (self.reorder_deadline, self.pace_at, self._tail_deadline()):
            if r is not None and (t is None or r < t):
                t = r
        if pkt is not None:
            d = pkt.sent + self.rtt.current()
            if t is None or d < t:
                t = d
        return t
