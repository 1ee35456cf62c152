"""Route and EV health of one MRC connection (sender side).

A path is one (ev, plane) pair, identified inside the core by its index
``pid``. Several EVs alias one *route* (plane, T1) through the fabric
(mrc_host/routes.py says which); failures are judged per route, congestion
per EV, as the paper's NICs do with their EV sets.

EV sets
-------
On each plane ``active_evs_per_plane`` EVs are *active* (carry data), spread
evenly over the plane's routes; the others are the *backup* set. When a
route is retired or denied its active EVs are swapped for backup EVs of the
same plane on routes still in use, and when it returns the plane's active
EVs are spread over it again, so each plane keeps its share of the traffic.

Route states (event -> effect)
------------------------------
GOOD       --loss without trim on any of its EVs-->  SUSPECT; a probe goes at once
           --a packet on it overdue (the sender: a
             packet sent after it was acked, and it is
             older than the route's own SRTT + max(4
             RTTVAR, SRTT/4), that margin at most one
             SRTT; no loss yet)-->                    SUSPECT the same way: load moves off a
             dead route about one RTT after its first unanswered packet, a loss
             declaration (and retransmission) waits for the reorder window
           --its ``LOSSY_SUSPICIONS``-th SACK-gap suspicion
             within ``LOSSY_RTTS`` RTTs (one per suspect
             episode; one whose packet is acked after
             all, reordering, is forgotten)-->        ASSUMED_BAD at once (a lossy, gray
             route answers most probes: it is retired, and its EVs swapped, now),
             unless one of the holds below applies
           --a keepalive probe unanswered-->         SUSPECT
SUSPECT    --reply to any outstanding probe-->       GOOD (it was reordering, a random
                                                     loss or a stalled host)
           --ACK of a packet sent on it no earlier
             than the one that made it suspect-->    GOOD (it carried traffic after that)
           --its probe unanswered for the probe
             timeout (``PROBE_TIMEOUT_RTOS`` RTOs)--> ASSUMED_BAD, unless one of the holds:
             * stall: more than half of the routes are SUSPECT, or were made
               suspect within the last ``STALL_WINDOW_RTTS`` RTTs (a late ACK
               clears a suspicion of reordering at once): the host or the peer
               was descheduled, not the fabric (``stall_holds``); at most
               ``STALL_HOLDS_MAX`` holds in a row (a stall ends, a dead fabric
               does not);
             * plane floor: no other GOOD route on its plane and no SACK-gap
               evidence (only RTOs): never retire a plane's last route on an RTO
               alone (``floor_holds``);
             * connection floor: fewer than ``min_usable_paths`` routes would stay.
             A held route stays SUSPECT and is probed again.
ASSUMED_BAD --``probe_successes`` replies in a row-->  GOOD; probed every probe
             interval, the next probe at once after each reply
any        --denied (denylist, local NIC port down, the peer's port bitmap)--> DENIED
DENIED     --every denial lifted-->                  GOOD: whoever denied it saw it work
             again (the mapper after its repair probes through it, a NIC port's
             carrier, the peer's port bitmap); if it is still broken, its next
             overdue packet makes it SUSPECT

EV states (what selectors read in ``state``)
--------------------------------------------
DENIED / ASSUMED_BAD / SUSPECT   its route's state
BACKUP        in the backup set (never selected)
SKIP          an ACK for it echoed ECN: passed over for ``skip_time`` (at least
              ``skip_rtts`` x SRTT); a second echo while skipping migrates it:
              it is swapped for a backup EV of the plane (another route if one
              is GOOD), moving load off the congested EV
GOOD          usable
Selectors take GOOD, then SKIP, then SUSPECT EVs: no data goes on a suspect
or retired route while another route is usable. A route back in use gets the
next packet (``returned``): its first ACK tells at once that it works.

Probes
------
A probe carries a sequence number; a reply counts if it answers any probe
still outstanding, however late within the probe timeout (>= the current
RTO), so a route comes back at any RTT. A route (one EV of it, in turn), not
each alias, is probed. All probes draw on a budget of ``probe_budget`` x the
data bytes the connection moved (sent and received), plus a small initial
allowance: probes stay a fixed small fraction of the traffic. A connection
that only receives sends a *keepalive* probe each RTT, on its routes in turn
(planes alternating), so the routes its ACKs take back (its reverse EV set)
stay fresh.

Timers in RTTs: skip time, probe interval and probe timeout scale with the
measured RTT and have absolute floors (TransportParams), so the same
defaults hold at 10 Mb/s and at 1 Gb/s.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence

from . import wire
from .events import PathStateChanged
from .rtt import RttEstimator

GOOD = 0
SKIP = 1
ASSUMED_BAD = 2
DENIED = 3
SUSPECT = 4
BACKUP = 5
STATE_NAMES = ("GOOD", "SKIP", "ASSUMED_BAD", "DENIED", "SUSPECT", "BACKUP")
USABLE = (GOOD, SKIP)

# route states share the numbering of the EV states they show as
R_GOOD, R_SUSPECT, R_BAD, R_DENIED = GOOD, SUSPECT, ASSUMED_BAD, DENIED

PROBE_WIRE_BYTES = wire.PROBE_HDR_LEN + 28       # + IPv4 and UDP headers
PROBE_ALLOWANCE = 64 * PROBE_WIRE_BYTES           # budget before any data moved
PROBE_TIMEOUT_RTOS = 2                            # a probe is unanswered after this many RTOs
STALL_HOLDS_MAX = 4                               # probe timeouts in a row a stall may explain
STALL_WINDOW_RTTS = 2                             # suspicions this recent count as "at once"
LATE_REPLIES_KEPT = 256                           # timed-out probes whose late reply still counts
LOSSY_RTTS = 16                                   # a route suspected this often this soon is lossy
LOSSY_SUSPICIONS = 3
ECN_MIGRATE_ECHOES = 1                            # further echoes while skipping that move load off an EV
INF = float("inf")


class PathHealth:
    """Health of every path and route of one connection.

    paths: list of (ev, plane); index = pid
    routes: the route key of each path (routes.route_of), index for index
    params: TransportParams (skip, probe and floor settings)
    rtt: the sender's RttEstimator (timers are in RTTs)
    counters: the connection's Counters (data bytes moved set the probe budget)
    emit: called with each PathStateChanged (the connection queues it)
    peer: label copied into events
    """

    def __init__(self, paths: Sequence[tuple[int, int]], routes: Sequence[Hashable], params, rtt,
                 counters, emit: Callable[[PathStateChanged], None] | None = None, peer=None):
        self.paths = list(paths)
        self.params = params
        self.rtt = rtt
        self.c = counters
        self.emit = emit
        self.peer = peer
        self.log: list[PathStateChanged] = []
        n = len(self.paths)
        self.route_keys: list = list(dict.fromkeys(routes))
        index = {k: i for i, k in enumerate(self.route_keys)}
        self.route_of_pid = [index[k] for k in routes]
        self.route_pids: list[list[int]] = [[] for _ in self.route_keys]
        for pid, rid in enumerate(self.route_of_pid):
            self.route_pids[rid].append(pid)
        self.plane_pids: dict[int, list[int]] = {}
        for pid, (_ev, plane) in enumerate(self.paths):
            self.plane_pids.setdefault(plane, []).append(pid)
        nr = len(self.route_keys)
        self.rstate = [R_GOOD] * nr
        self.denials: list[set] = [set() for _ in range(nr)]
        self.suspect_reason = [""] * nr
        self.suspect_sent = [INF] * nr       # send time of the packet that made it suspect
        self.suspected_at = [-INF] * nr      # when it last became suspect
        self.gap_suspicions: list[list[float]] = [[] for _ in range(nr)]   # recent SACK-gap suspicions
        self.replied_at = [-INF] * nr        # when a probe of the route was last answered
        self.held = [0] * nr                 # stall holds of the route in a row
        self.gap_evidence = [False] * nr
        self.next_probe = [INF] * nr
        self.consecutive = [0] * nr
        self.probe_turn = [0] * nr           # which EV of the route the next probe rides
        self.outstanding: dict[int, tuple[int, float]] = {}   # probe seq -> (rid, sent)
        self.timed_out: dict[int, tuple[int, float]] = {}     # the same, past their timeout
        # RTT of probes: the timeout of a connection that never sent data (no
        # data RTT) and a floor for everyone's (probes queue like data does)
        self.probe_rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max,
                                      params.rto_granularity, params.rto_min_rtts)
        self._seq = 0
        self.probe_bytes = 0                 # probe bytes sent, against the budget
        self.next_keepalive = 0.0
        self.keepalive_turn = 0              # which GOOD route the next keepalive probes
        # routes with the planes interleaved: (plane 0 route 0, plane 1 route 0, ..., plane 0 route 1, ...)
        seen: dict[int, int] = {}
        position = []
        for key in self.route_keys:
            seen[key[0]] = seen.get(key[0], -1) + 1
            position.append(seen[key[0]])
        self.keepalive_order = sorted(range(nr), key=lambda r: (position[r], self.route_keys[r][0]))
        self.active = [True] * n
        self.skipping = [False] * n
        self.skip_until = [0.0] * n
        self.echoes_in_skip = [0] * n
        self.state = [GOOD] * n              # read directly by path selectors (hot path)
        self.n_skip = 0
        self.next_skip_expiry = INF
        # an active EV of each route just back in use (from ASSUMED_BAD or DENIED): the
        # selector sends the next packet on it, so its first ACK (recovery) comes one
        # RTT after its return, not a turn of the plane's EVs later
        self.returned: list[int] = []
        self.losses = [0] * n
        self.trims = [0] * n
        self.ecn = [0] * n
        self.floor_holds = self.stall_holds = self.swaps = self.ecn_migrations = 0
        self.overdue_suspicions = self.ack_clears = 0
        self.probe_timeouts = self.probes_deferred = 0
        self._choose_active_sets()

    # --- EV sets --------------------------------------------------------------------------
    def _choose_active_sets(self) -> None:
        want = self.params.active_evs_per_plane
        for plane, pids in self.plane_pids.items():
            if want <= 0 or want >= len(pids):
                continue
            by_route: dict[int, list[int]] = {}
            for pid in pids:
                by_route.setdefault(self.route_of_pid[pid], []).append(pid)
            columns = list(by_route.values())
            order = [col[i] for i in range(max(map(len, columns))) for col in columns if i < len(col)]
            for pid in order[want:]:
                self.active[pid] = False
                self.state[pid] = BACKUP

    def _in_use(self, rid: int) -> bool:
        return self.rstate[rid] in (R_GOOD, R_SUSPECT)

    def _rebalance(self, plane: int, now: float, reason: str) -> None:
        """Active EVs off retired routes, then spread evenly over the plane's routes in use."""
        pids = self.plane_pids[plane]
        want = self.params.active_evs_per_plane
        if want <= 0 or want >= len(pids):
            return
        active = [p for p in pids if self.active[p] and self._in_use(self.route_of_pid[p])]
        spare = [p for p in pids if not self.active[p] and self._in_use(self.route_of_pid[p])]
        if not active and not spare:
            return          # every route of the plane is out: nothing to swap to
        for p in pids:
            if self.active[p] and not self._in_use(self.route_of_pid[p]):
                self.active[p] = False
        count: dict[int, int] = {}
        for p in pids:
            rid = self.route_of_pid[p]
            if self._in_use(rid):
                count.setdefault(rid, 0)
                count[rid] += self.active[p]
        while True:
            n_active = sum(count.values())
            low = min((r for r in count if any(self.route_of_pid[p] == r for p in spare)),
                      key=count.get, default=None)
            if low is None:
                break
            high = max(count, key=count.get)
            if n_active < want:
                pass                                   # fill up to the plane's share
            elif count[high] - count[low] > 1:
                out = next(p for p in pids if self.active[p] and self.route_of_pid[p] == high)
                self.active[out] = False
                spare.append(out)
                count[high] -= 1
            else:
                break
            pin = next(p for p in spare if self.route_of_pid[p] == low)
            spare.remove(pin)
            self.active[pin] = True
            count[low] += 1
            self.swaps += 1
        self._refresh(pids, reason, now)

    def _migrate(self, pid: int, now: float) -> None:
        """Swap a congested active EV for a backup EV of its plane (another route first)."""
        plane, rid = self.paths[pid][1], self.route_of_pid[pid]
        spares = [p for p in self.plane_pids[plane]
                  if not self.active[p] and self.rstate[self.route_of_pid[p]] == R_GOOD]
        if not spares:
            return
        spares.sort(key=lambda p: self.route_of_pid[p] == rid)
        new = spares[0]
        self.active[pid], self.active[new] = False, True
        self.ecn_migrations += 1
        self._refresh((pid, new), "ecn_migrate", now)

    # --- derived EV state -------------------------------------------------------------------
    def _derive(self, pid: int) -> int:
        r = self.rstate[self.route_of_pid[pid]]
        if r != R_GOOD:
            return r
        if not self.active[pid]:
            return BACKUP
        return SKIP if self.skipping[pid] else GOOD

    def _refresh(self, pids: Iterable[int], reason: str, now: float) -> None:
        for pid in pids:
            old, new = self.state[pid], self._derive(pid)
            if old == new:
                continue
            self.state[pid] = new
            self.n_skip += (new == SKIP) - (old == SKIP)
            ev, plane = self.paths[pid]
            rec = PathStateChanged(ev, plane, STATE_NAMES[old], STATE_NAMES[new], reason, now, self.peer)
            self.log.append(rec)
            if self.emit is not None:
                self.emit(rec)

    def _set_route(self, rid: int, new: int, reason: str, now: float) -> None:
        old = self.rstate[rid]
        if old == new:
            return
        self.rstate[rid] = new
        if new == R_SUSPECT:
            self.suspect_reason[rid] = reason
            self.suspected_at[rid] = now
            self.next_probe[rid] = now
        elif new == R_BAD:
            self.consecutive[rid] = 0
            self.next_probe[rid] = now + self.probe_interval()
        else:
            self.next_probe[rid] = INF
            self.gap_evidence[rid] = False
            self.held[rid] = 0
            self.suspect_sent[rid] = INF
        plane = self.route_keys[rid][0]
        if (old in (R_BAD, R_DENIED)) != (new in (R_BAD, R_DENIED)):
            self._rebalance(plane, now, reason)
        self._refresh(self.route_pids[rid], reason, now)
        if old in (R_BAD, R_DENIED) and new == R_GOOD:
            first = next((p for p in self.route_pids[rid] if self.state[p] == GOOD), None)
            if first is not None:
                self.returned.append(first)
                del self.returned[:-len(self.route_keys)]   # a selector that never reads it

    # --- timers in RTTs -----------------------------------------------------------------------
    def _srtt(self) -> float:
        return self.rtt.srtt or 0.0

    def skip_time(self) -> float:
        return max(self.params.skip_time, self.params.skip_rtts * self._srtt())

    def probe_interval(self) -> float:
        return max(self.params.probe_interval, self.params.probe_interval_rtts * self._srtt())

    def probe_timeout(self) -> float:
        """PROBE_TIMEOUT_RTOS x the larger of the data and the probe RTO: a
        suspect route carries no data meanwhile, so waiting longer before
        retiring it costs nothing, and a peer descheduled past one RTO (a busy
        machine) no longer retires healthy routes."""
        rtt, probes = self.rtt, self.probe_rtt
        if rtt.srtt is None and probes.srtt is None:
            rto = rtt.current()                                   # nothing measured yet
        else:
            data = rtt.current() if rtt.srtt is not None else 0.0
            rto = max(data, probes.current() if probes.srtt is not None else 0.0)
        return max(PROBE_TIMEOUT_RTOS * rto, self.probe_interval())

    # --- signals from the sender --------------------------------------------------------------
    def probe_credit(self) -> float:
        """Probe bytes that may still be sent: the allowance plus ``probe_budget``
        of every data byte moved, less the probe bytes already sent."""
        c = self.c
        moved = c.data_bytes_sent + c.data_bytes_received
        return PROBE_ALLOWANCE + self.params.probe_budget * moved - self.probe_bytes

    def on_ecn_echo(self, pid: int, now: float) -> None:
        self.ecn[pid] += 1
        st = self.state[pid]
        if st not in USABLE:
            return
        if st == SKIP:
            self.echoes_in_skip[pid] += 1
            if self.echoes_in_skip[pid] >= ECN_MIGRATE_ECHOES and self.params.ecn_migration:
                self.echoes_in_skip[pid] = 0
                self._migrate(pid, now)
        until = now + self.skip_time()
        self.skip_until[pid] = until
        if until < self.next_skip_expiry:
            self.next_skip_expiry = until
        self.skipping[pid] = True
        self._refresh((pid,), "ecn_echo", now)

    def on_trim(self, pid: int, now: float) -> None:
        self.trims[pid] += 1

    def on_loss(self, pid: int, now: float, reason: str, sent: float = -INF) -> None:
        """A packet sent on ``pid`` at ``sent`` was lost without a trim (``reason``: rto / tail / sack_gap)."""
        self.losses[pid] += 1
        rid = self.route_of_pid[pid]
        st = self.rstate[rid]
        # one SACK-gap suspicion per episode, also when an overdue packet made the route suspect first
        lossy = (reason == "sack_gap" and st in (R_GOOD, R_SUSPECT) and not self.gap_evidence[rid]
                 and self._lossy(rid, now))
        if reason == "sack_gap":
            self.gap_evidence[rid] = True
        if st == R_GOOD:
            self.suspect_sent[rid] = sent
            self._set_route(rid, R_SUSPECT, reason, now)
        if lossy and not self._hold(rid, now):
            self._set_route(rid, R_BAD, "lossy", now)

    def on_overdue(self, pid: int, sent: float, now: float) -> None:
        """A packet sent on ``pid`` at ``sent`` is overdue: packets sent after it were
        acked and it was not. Its route becomes suspect (no data on it, a probe at
        once) but nothing is declared lost yet: reordering clears it with an ACK."""
        rid = self.route_of_pid[pid]
        if self.rstate[rid] != R_GOOD:
            return
        self.overdue_suspicions += 1
        self.suspect_sent[rid] = sent
        self._set_route(rid, R_SUSPECT, "overdue", now)

    def on_route_ack(self, rid: int, sent: float, now: float) -> None:
        """An ACK of a packet sent on suspect route ``rid`` at ``sent`` (the sender
        calls this only while the route is SUSPECT: the hot path stays a lookup)."""
        if sent >= self.suspect_sent[rid]:
            self.ack_clears += 1
            self._set_route(rid, R_GOOD, "acked", now)

    def on_spurious_gap(self, pid: int) -> None:
        """A packet declared lost by a SACK gap on ``pid`` was acked after all (it
        was reordered, on a busy host): that suspicion does not count towards
        retiring its route as lossy."""
        recent = self.gap_suspicions[self.route_of_pid[pid]]
        if recent:
            recent.pop()

    def _lossy(self, rid: int, now: float) -> bool:
        recent = [t for t in self.gap_suspicions[rid] if now - t < LOSSY_RTTS * self._srtt()]
        recent.append(now)
        self.gap_suspicions[rid] = recent
        return len(recent) >= LOSSY_SUSPICIONS

    def on_probe_reply(self, seq: int, now: float) -> None:
        """A reply to any probe we sent counts, a late one too (its route works;
        the timeout only decides when silence is news); unknown seqs are ignored."""
        entry = self.outstanding.pop(seq, None) or self.timed_out.pop(seq, None)
        if entry is None:
            return                    # unknown or duplicate
        rid, sent = entry
        self.probe_rtt.sample(now - sent)
        self.replied_at[rid] = now
        st = self.rstate[rid]
        if st == R_SUSPECT:
            self._set_route(rid, R_GOOD, "probe_ok", now)
        elif st == R_BAD:
            self.consecutive[rid] += 1
            if self.consecutive[rid] >= self.params.probe_successes:
                self._set_route(rid, R_GOOD, "probes_ok", now)
            else:
                self.next_probe[rid] = now   # recovery takes K round trips, not K intervals

    # --- denials --------------------------------------------------------------------------------
    def set_denied(self, source: str, denied: Iterable[tuple], now: float) -> None:
        """Routes denied by ``source`` from now on (replacing its earlier list):
        each entry a route key (plane, t1), or (plane, None) for the whole plane."""
        denied = set(denied)
        whole = {plane for plane, t1 in denied if t1 is None}
        for rid, key in enumerate(self.route_keys):
            hit = key in denied or key[0] in whole
            had = source in self.denials[rid]
            if hit == had:
                continue
            if hit:
                self.denials[rid].add(source)
                self._set_route(rid, R_DENIED, source, now)
            else:
                self.denials[rid].discard(source)
                if not self.denials[rid]:
                    self._set_route(rid, R_GOOD, source + "_lifted", now)

    def set_ports_down(self, source: str, planes_down: Iterable[int], now: float) -> None:
        self.set_denied(source, [(p, None) for p in planes_down], now)

    # --- timers ---------------------------------------------------------------------------------
    def expire(self, now: float) -> None:
        """SKIP EVs whose time is up go back to GOOD; unanswered probes time out."""
        if self.outstanding:
            self._expire_probes(now)
        if len(self.timed_out) > LATE_REPLIES_KEPT:
            for seq in list(self.timed_out)[:len(self.timed_out) - LATE_REPLIES_KEPT]:
                del self.timed_out[seq]
        if now < self.next_skip_expiry:
            return
        nxt = INF
        until = self.skip_until
        for pid, skipping in enumerate(self.skipping):
            if skipping:
                if until[pid] <= now:
                    self.skipping[pid] = False
                    self.echoes_in_skip[pid] = 0
                    self._refresh((pid,), "skip_expired", now)
                elif until[pid] < nxt:
                    nxt = until[pid]
        self.next_skip_expiry = nxt

    def _expire_probes(self, now: float) -> None:
        timeout = self.probe_timeout()
        for seq, (rid, sent) in list(self.outstanding.items()):
            if sent + timeout <= now:     # the same sum next_deadline gives: no float gap
                del self.outstanding[seq]
                self.timed_out[seq] = (rid, sent)
                self.probe_timeouts += 1
                if sent > self.replied_at[rid]:   # older than an answered one: news of nothing
                    self._probe_missed(rid, now)

    def _probe_missed(self, rid: int, now: float) -> None:
        self.consecutive[rid] = 0
        st = self.rstate[rid]
        if st == R_GOOD:
            self._set_route(rid, R_SUSPECT, "probe_lost", now)
        elif st == R_SUSPECT:
            hold = self._hold(rid, now)
            if hold:
                self.next_probe[rid] = now       # held: stay SUSPECT, ask again
            else:
                self._set_route(rid, R_BAD, self.suspect_reason[rid], now)

    def _hold(self, rid: int, now: float) -> bool:
        """Why a suspect route must not be retired (its probe went unanswered, or it looks lossy)."""
        states = self.rstate
        live = [r for r in range(len(states)) if states[r] != R_DENIED]
        recent = now - max(STALL_WINDOW_RTTS * self._srtt(), self.params.probe_interval)
        hit = sum(states[r] == R_SUSPECT or self.suspected_at[r] >= recent for r in live)
        if 2 * hit > len(live) and self.held[rid] < STALL_HOLDS_MAX:
            self.held[rid] += 1
            self.stall_holds += 1
            return True
        plane = self.route_keys[rid][0]
        if not self.gap_evidence[rid] and not any(
                states[r] == R_GOOD for r in range(len(states))
                if r != rid and self.route_keys[r][0] == plane):
            self.floor_holds += 1
            return True
        if sum(states[r] in (R_GOOD, R_SUSPECT) for r in live) - 1 < self.params.min_usable_paths:
            self.floor_holds += 1
            return True
        return False

    def probes_due(self, now: float, keepalive: bool = False) -> list[tuple[int, int]]:
        """(pid, seq) of each probe to send now, recorded as outstanding.
        ``keepalive``: the connection only receives; probe one of its routes each RTT."""
        due = [rid for rid, t in enumerate(self.next_probe) if t <= now]
        if keepalive and now >= self.next_keepalive:
            self.next_keepalive = now + self.probe_interval()
            due += self._keepalive_routes()
        out = []
        credit = self.probe_credit() if due else 0.0
        for rid in due:
            # a suspect route's probe is the answer to a loss: never held back
            # (one per loss or per probe timeout); the budget bounds the rest
            if credit < PROBE_WIRE_BYTES and self.rstate[rid] != R_SUSPECT:
                self.probes_deferred += 1
                if self.next_probe[rid] <= now:
                    self.next_probe[rid] = now + self.probe_interval()   # not spinning
                continue
            credit -= PROBE_WIRE_BYTES
            self.probe_bytes += PROBE_WIRE_BYTES
            pids = self.route_pids[rid]
            pid = pids[self.probe_turn[rid] % len(pids)]
            self.probe_turn[rid] += 1
            self._seq = (self._seq % 0xFFFFFFFF) + 1
            self.outstanding[self._seq] = (rid, now)
            st = self.rstate[rid]
            # a suspect route waits for its probe's answer or timeout; a bad one is probed on
            self.next_probe[rid] = now + self.probe_interval() if st == R_BAD else INF
            out.append((pid, self._seq))
        return out

    def _keepalive_routes(self) -> list[int]:
        """The next GOOD route, planes in turn (one probe per interval: each
        route is refreshed every few tens of RTTs at a few probes a second),
        unless it has a probe outstanding already."""
        good = [rid for rid in self.keepalive_order if self.rstate[rid] == R_GOOD]
        if not good:
            return []
        rid = good[self.keepalive_turn % len(good)]
        self.keepalive_turn += 1
        waiting = {r for r, _ in self.outstanding.values()}
        return [] if rid in waiting else [rid]

    def next_deadline(self, keepalive: bool = False) -> float | None:
        t = self.next_skip_expiry if self.n_skip else INF
        for nxt in self.next_probe:
            if nxt < t:
                t = nxt
        if self.outstanding:
            oldest = min(sent for _rid, sent in self.outstanding.values())
            t = min(t, oldest + self.probe_timeout())
        if keepalive and self.next_keepalive < t:
            t = self.next_keepalive
        return None if t == INF else t

    # --- views ------------------------------------------------------------------------------------
    def probing(self) -> bool:
        """Whether any route is waiting for a probe (cheap check for the hot path)."""
        return bool(self.outstanding) or min(self.next_probe) != INF

    def state_name(self, pid: int) -> str:
        return STATE_NAMES[self.state[pid]]

    def route_state_names(self) -> list[str]:
        return [STATE_NAMES[s] for s in self.rstate]

    @property
    def usable(self) -> int:
        """EVs data may go on now (GOOD or SKIP)."""
        return sum(s in USABLE for s in self.state)

    def counters(self) -> dict:
        return {"usable": self.usable, "floor_holds": self.floor_holds, "stall_holds": self.stall_holds,
                "ev_swaps": self.swaps, "ecn_migrations": self.ecn_migrations,
                "probe_timeouts": self.probe_timeouts, "probes_deferred": self.probes_deferred,
                "overdue_suspicions": self.overdue_suspicions, "ack_clears": self.ack_clears,
                "assumed_bad": [list(self.paths[p]) for p, s in enumerate(self.state) if s == ASSUMED_BAD],
                "denied": [list(self.paths[p]) for p, s in enumerate(self.state) if s == DENIED]}
