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
             timeout (probes.PROBE_TIMEOUT_RTOS RTOs)--> ASSUMED_BAD, unless one of the holds:
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
ASSUMED_BAD --``probe_successes`` x 2^relapses replies in a row,
             in send order (a probe unanswered when a later one is answered
             ends a row)-->                           GOOD; probed every probe interval, the
             next probe at once after each reply. A relapse: retired within
             ``relapse_window_intervals`` probe intervals of its last return on
             probes (a lossy route answers most probes and fails again soon); each
             relapse in a row doubles the replies its next return needs, at most
             ``relapse_doublings_max`` times; a retirement after a longer stretch
             in use (a new failure: a flap, a reboot) needs ``probe_successes``
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

from .events import PathStateChanged
from .ev_sets import backup_set, rebalance
from .probes import PROBE_WIRE_BYTES, ProbeLedger

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

STALL_HOLDS_MAX = 4                               # probe timeouts in a row a stall may explain
STALL_WINDOW_RTTS = 2                             # suspicions this recent count as "at once"
LOSSY_RTTS = 16                                   # a route suspected this often this soon is lossy
LOSSY_SUSPICIONS = 3
ECN_MIGRATE_ECHOES = 1                            # further echoes while skipping that move load off an EV
INF = float("inf")


class RouteHealth:
    """One route (plane, T1) of a connection: its state and the evidence judging it."""

    __slots__ = ("rid", "key", "plane", "pids", "state", "denials", "suspect_reason", "suspect_sent",
                 "suspected_at", "gap_suspicions", "gap_evidence", "replied_at", "held", "next_probe",
                 "replies_in_a_row", "probe_turn", "streak_after", "back_at", "relapses")

    def __init__(self, rid: int, key: Hashable, pids: list[int]):
        self.rid = rid
        self.key = key
        self.plane = key[0]
        self.pids = pids                     # the paths (EVs) aliasing it
        self.state = R_GOOD
        self.denials: set = set()            # the sources denying it (denylist, NIC ports)
        self.suspect_reason = ""
        self.suspect_sent = INF              # send time of the packet that made it suspect
        self.suspected_at = -INF             # when it last became suspect
        self.gap_suspicions: list[float] = []   # recent SACK-gap suspicions
        self.gap_evidence = False            # a SACK gap (not only RTOs) spoke in this episode
        self.replied_at = -INF               # when a probe of it was last answered
        self.held = 0                        # stall holds in a row
        self.next_probe = INF
        self.replies_in_a_row = 0            # replies while retired to its probes sent after streak_after
        self.probe_turn = 0                  # which of its EVs the next probe rides
        self.streak_after = -INF             # its retirement, or the last probe since known lost
        self.back_at = -INF                  # when probe replies last brought it back
        self.relapses = 0                    # retirements in a row, each soon after such a return

    def in_use(self) -> bool:
        return self.state in (R_GOOD, R_SUSPECT)


class EvHealth:
    """One path (ev, plane): whether it is in its plane's active set, and its ECN skip."""

    __slots__ = ("pid", "ev", "plane", "route", "active", "skipping", "skip_until", "echoes_in_skip")

    def __init__(self, pid: int, ev: int, plane: int, route: RouteHealth):
        self.pid = pid
        self.ev = ev
        self.plane = plane
        self.route = route
        self.active = True
        self.skipping = False
        self.skip_until = 0.0
        self.echoes_in_skip = 0


class PathHealth:
    """Health of every path and route of one connection.

    paths: list of (ev, plane); index = pid
    routes: the route key of each path (routes.route_of), index for index
    params: TransportParams (skip, probe and floor settings)
    rtt: the sender's RttEstimator (timers are in RTTs)
    counters: the connection's Counters (data bytes moved set the probe budget)
    emit: called with each PathStateChanged (the connection queues it)
    peer: label copied into events

    Each route and each EV is an object (``routes``, ``evs``); what path
    selectors read on every packet are lists indexed by pid: ``state`` (the
    EV's state, derived from its route's and its own) and the counters
    ``losses``, ``trims``, ``ecn`` (exercise 01's policies read them).
    """

    def __init__(self, paths: Sequence[tuple[int, int]], routes: Sequence[Hashable], params, rtt,
                 counters, emit: Callable[[PathStateChanged], None] | None = None, peer=None):
        self.paths = list(paths)
        self.params = params
        self.rtt = rtt
        self.emit = emit
        self.peer = peer
        self.log: list[PathStateChanged] = []
        self.probes = ProbeLedger(params, rtt, counters)
        self._build_routes(routes)
        self._build_evs()
        self.keepalive_order = self._interleaved_routes()
        self.next_keepalive = 0.0
        self.keepalive_turn = 0              # which GOOD route the next keepalive probes
        self.routes_to_probe = 0             # routes with a probe scheduled (next_probe < INF)
        self.floor_holds = self.stall_holds = self.swaps = self.ecn_migrations = 0
        self.overdue_suspicions = self.ack_clears = self.probes_deferred = 0
        self._choose_active_sets()

    def _build_routes(self, route_keys: Sequence[Hashable]) -> None:
        """One RouteHealth per distinct route key, in order of first appearance."""
        keys = list(dict.fromkeys(route_keys))
        index = {k: i for i, k in enumerate(keys)}
        self.route_of_pid = [index[k] for k in route_keys]
        self.routes = [RouteHealth(rid, key, []) for rid, key in enumerate(keys)]
        for pid, rid in enumerate(self.route_of_pid):
            self.routes[rid].pids.append(pid)
        self.route_keys = keys

    def _build_evs(self) -> None:
        """One EvHealth per path, grouped by plane, and the per-pid lists selectors read."""
        n = len(self.paths)
        self.evs = [EvHealth(pid, ev, plane, self.routes[self.route_of_pid[pid]])
                    for pid, (ev, plane) in enumerate(self.paths)]
        self.plane_evs: dict[int, list[EvHealth]] = {}
        for e in self.evs:
            self.plane_evs.setdefault(e.plane, []).append(e)
        self.state = [GOOD] * n              # read directly by path selectors (hot path)
        self.losses = [0] * n
        self.trims = [0] * n
        self.ecn = [0] * n
        self.n_skip = 0
        self.next_skip_expiry = INF
        # an active EV of each route just back in use (from ASSUMED_BAD or DENIED): the
        # selector sends the next packet on it, so its first ACK (recovery) comes one
        # RTT after its return, not a turn of the plane's EVs later
        self.returned: list[int] = []

    def _interleaved_routes(self) -> list[RouteHealth]:
        """The routes with the planes interleaved: (plane 0 route 0, plane 1 route 0, ...,
        plane 0 route 1, ...), the order keepalive probes take."""
        seen: dict[int, int] = {}
        position = []
        for route in self.routes:
            seen[route.plane] = seen.get(route.plane, -1) + 1
            position.append(seen[route.plane])
        order = sorted(range(len(self.routes)), key=lambda r: (position[r], self.routes[r].plane))
        return [self.routes[r] for r in order]

    # --- EV sets --------------------------------------------------------------------------
    def _choose_active_sets(self) -> None:
        for evs in self.plane_evs.values():
            for e in backup_set(evs, self.params.active_evs_per_plane):
                e.active = False
                self.state[e.pid] = BACKUP

    def _rebalance(self, plane: int, now: float, reason: str) -> None:
        """Active EVs off retired routes, then spread evenly over the plane's routes in use."""
        evs = self.plane_evs[plane]
        want = self.params.active_evs_per_plane
        if want <= 0 or want >= len(evs):
            return
        self.swaps += rebalance(evs, want)
        self._refresh(evs, reason, now)

    def _migrate(self, e: EvHealth, now: float) -> None:
        """Swap a congested active EV for a backup EV of its plane (another route first)."""
        spares = [s for s in self.plane_evs[e.plane] if not s.active and s.route.state == R_GOOD]
        if not spares:
            return
        spares.sort(key=lambda s: s.route is e.route)
        new = spares[0]
        e.active, new.active = False, True
        self.ecn_migrations += 1
        self._refresh((e, new), "ecn_migrate", now)

    # --- derived EV state -------------------------------------------------------------------
    @staticmethod
    def _derive(e: EvHealth) -> int:
        r = e.route.state
        if r != R_GOOD:
            return r
        if not e.active:
            return BACKUP
        return SKIP if e.skipping else GOOD

    def _refresh(self, evs: Iterable[EvHealth], reason: str, now: float) -> None:
        for e in evs:
            old, new = self.state[e.pid], self._derive(e)
            if old == new:
                continue
            self.state[e.pid] = new
            self.n_skip += (new == SKIP) - (old == SKIP)
            rec = PathStateChanged(e.ev, e.plane, STATE_NAMES[old], STATE_NAMES[new], reason, now, self.peer)
            self.log.append(rec)
            if self.emit is not None:
                self.emit(rec)

    def _set_route(self, route: RouteHealth, new: int, reason: str, now: float) -> None:
        old = route.state
        if old == new:
            return
        route.state = new
        if new == R_SUSPECT:
            route.suspect_reason = reason
            route.suspected_at = now
            self.schedule_probe(route, now)
        elif new == R_BAD:
            route.replies_in_a_row = 0
            route.streak_after = now
            soon = now - route.back_at < self.params.relapse_window_intervals * self.probe_interval()
            route.relapses = route.relapses + 1 if soon else 0
            self.schedule_probe(route, now + self.probe_interval())
        else:
            self.schedule_probe(route, INF)
            route.gap_evidence = False
            route.held = 0
            route.suspect_sent = INF
        if (old in (R_BAD, R_DENIED)) != (new in (R_BAD, R_DENIED)):
            self._rebalance(route.plane, now, reason)
        route_evs = [self.evs[pid] for pid in route.pids]
        self._refresh(route_evs, reason, now)
        if old in (R_BAD, R_DENIED) and new == R_GOOD:
            first = next((pid for pid in route.pids if self.state[pid] == GOOD), None)
            if first is not None:
                self.returned.append(first)
                del self.returned[:-len(self.routes)]   # a selector that never reads it

    def schedule_probe(self, route: RouteHealth, at: float) -> None:
        """Probe ``route`` at ``at`` (INF: no probe planned), keeping count of the routes
        with one planned so the hot path checks a number, not every route."""
        self.routes_to_probe += (at != INF) - (route.next_probe != INF)
        route.next_probe = at

    # --- timers in RTTs -----------------------------------------------------------------------
    def _srtt(self) -> float:
        return self.rtt.srtt or 0.0

    def skip_time(self) -> float:
        return max(self.params.skip_time, self.params.skip_rtts * self._srtt())

    def probe_interval(self) -> float:
        return max(self.params.probe_interval, self.params.probe_interval_rtts * self._srtt())

    def probe_timeout(self) -> float:
        return self.probes.timeout(self.probe_interval())

    # --- signals from the sender --------------------------------------------------------------
    def on_ecn_echo(self, pid: int, now: float) -> None:
        self.ecn[pid] += 1
        st = self.state[pid]
        if st not in USABLE:
            return
        e = self.evs[pid]
        if st == SKIP:
            e.echoes_in_skip += 1
            if e.echoes_in_skip >= ECN_MIGRATE_ECHOES and self.params.ecn_migration:
                e.echoes_in_skip = 0
                self._migrate(e, now)
        until = now + self.skip_time()
        e.skip_until = until
        if until < self.next_skip_expiry:
            self.next_skip_expiry = until
        e.skipping = True
        self._refresh((e,), "ecn_echo", now)

    def on_trim(self, pid: int, now: float) -> None:
        self.trims[pid] += 1

    def on_loss(self, pid: int, now: float, reason: str, sent: float = -INF) -> None:
        """A packet sent on ``pid`` at ``sent`` was lost without a trim (``reason``: rto / tail / sack_gap)."""
        self.losses[pid] += 1
        route = self.evs[pid].route
        st = route.state
        # one SACK-gap suspicion per episode, also when an overdue packet made the route suspect first
        lossy = (reason == "sack_gap" and st in (R_GOOD, R_SUSPECT) and not route.gap_evidence
                 and self._lossy(route, now))
        if reason == "sack_gap":
            route.gap_evidence = True
        if st == R_GOOD:
            route.suspect_sent = sent
            self._set_route(route, R_SUSPECT, reason, now)
        if lossy and not self._hold(route, now):
            self._set_route(route, R_BAD, "lossy", now)

    def on_overdue(self, pid: int, sent: float, now: float) -> None:
        """A packet sent on ``pid`` at ``sent`` is overdue: packets sent after it were
        acked and it was not. Its route becomes suspect (no data on it, a probe at
        once) but nothing is declared lost yet: reordering clears it with an ACK."""
        route = self.evs[pid].route
        if route.state != R_GOOD:
            return
        self.overdue_suspicions += 1
        route.suspect_sent = sent
        self._set_route(route, R_SUSPECT, "overdue", now)

    def on_route_ack(self, rid: int, sent: float, now: float) -> None:
        """An ACK of a packet sent on suspect route ``rid`` at ``sent`` (the sender
        calls this only while the route is SUSPECT: the hot path stays a lookup)."""
        route = self.routes[rid]
        if sent >= route.suspect_sent:
            self.ack_clears += 1
            self._set_route(route, R_GOOD, "acked", now)

    def on_spurious_gap(self, pid: int) -> None:
        """A packet declared lost by a SACK gap on ``pid`` was acked after all (it
        was reordered, on a busy host): that suspicion does not count towards
        retiring its route as lossy."""
        recent = self.evs[pid].route.gap_suspicions
        if recent:
            recent.pop()

    def _lossy(self, route: RouteHealth, now: float) -> bool:
        recent = [t for t in route.gap_suspicions if now - t < LOSSY_RTTS * self._srtt()]
        recent.append(now)
        route.gap_suspicions = recent
        return len(recent) >= LOSSY_SUSPICIONS

    def _count_reply(self, route: RouteHealth, sent: float) -> None:
        """A reply to a probe of retired ``route`` sent at ``sent``: one more in a row, in send
        order. An earlier probe still unanswered was lost (a route's replies come in order):
        the row starts again here, not at its timeout, by when the probes sent since may
        have answered many times (a row counted around a loss)."""
        lost = [at for r, at in self.probes.outstanding.values() if r is route and route.streak_after < at < sent]
        if lost:
            route.streak_after = max(lost)
            route.replies_in_a_row = 1
        else:
            route.replies_in_a_row += 1

    def replies_to_return(self, route: RouteHealth) -> int:
        """Probe replies in a row that bring retired ``route`` back: doubled by each relapse."""
        return self.params.probe_successes << min(route.relapses, self.params.relapse_doublings_max)

    def on_probe_reply(self, seq: int, now: float) -> None:
        """A reply to any probe we sent counts, a late one too (its route works;
        the timeout only decides when silence is news); unknown seqs are ignored."""
        answered = self.probes.answer(seq, now)
        if answered is None:
            return                    # unknown or duplicate
        route, sent = answered
        route.replied_at = now
        if route.state == R_SUSPECT:
            self._set_route(route, R_GOOD, "probe_ok", now)
        elif route.state == R_BAD and sent > route.streak_after:
            self._count_reply(route, sent)
            if route.replies_in_a_row >= self.replies_to_return(route):
                route.back_at = now
                self._set_route(route, R_GOOD, "probes_ok", now)
            else:
                self.schedule_probe(route, now)   # recovery takes K round trips, not K intervals

    # --- denials --------------------------------------------------------------------------------
    def set_denied(self, source: str, denied: Iterable[tuple], now: float) -> None:
        """Routes denied by ``source`` from now on (replacing its earlier list):
        each entry a route key (plane, t1), or (plane, None) for the whole plane."""
        denied = set(denied)
        whole = {plane for plane, t1 in denied if t1 is None}
        for route in self.routes:
            hit = route.key in denied or route.plane in whole
            had = source in route.denials
            if hit == had:
                continue
            if hit:
                route.denials.add(source)
                self._set_route(route, R_DENIED, source, now)
            else:
                route.denials.discard(source)
                if not route.denials:
                    self._set_route(route, R_GOOD, source + "_lifted", now)

    def set_ports_down(self, source: str, planes_down: Iterable[int], now: float) -> None:
        self.set_denied(source, [(p, None) for p in planes_down], now)

    # --- timers ---------------------------------------------------------------------------------
    def expire(self, now: float) -> None:
        """SKIP EVs whose time is up go back to GOOD; unanswered probes time out."""
        if self.probes.outstanding:
            for route, sent in self.probes.expire(now, self.probe_timeout()):
                if sent > route.replied_at:   # older than an answered one: news of nothing
                    self._probe_missed(route, sent, now)
        if now < self.next_skip_expiry:
            return
        nxt = INF
        for e in self.evs:
            if e.skipping:
                if e.skip_until <= now:
                    e.skipping = False
                    e.echoes_in_skip = 0
                    self._refresh((e,), "skip_expired", now)
                elif e.skip_until < nxt:
                    nxt = e.skip_until
        self.next_skip_expiry = nxt

    def _probe_missed(self, route: RouteHealth, sent: float, now: float) -> None:
        route.replies_in_a_row = 0
        route.streak_after = max(route.streak_after, sent)
        if route.state == R_GOOD:
            self._set_route(route, R_SUSPECT, "probe_lost", now)
        elif route.state == R_SUSPECT:
            if self._hold(route, now):
                self.schedule_probe(route, now)       # held: stay SUSPECT, ask again
            else:
                self._set_route(route, R_BAD, route.suspect_reason, now)

    def _hold(self, route: RouteHealth, now: float) -> bool:
        """Why a suspect route must not be retired (its probe went unanswered, or it looks lossy)."""
        live = [r for r in self.routes if r.state != R_DENIED]
        recent = now - max(STALL_WINDOW_RTTS * self._srtt(), self.params.probe_interval)
        hit = sum(r.state == R_SUSPECT or r.suspected_at >= recent for r in live)
        if 2 * hit > len(live) and route.held < STALL_HOLDS_MAX:
            route.held += 1
            self.stall_holds += 1
            return True
        if not route.gap_evidence and not any(
                r.state == R_GOOD for r in self.routes if r is not route and r.plane == route.plane):
            self.floor_holds += 1
            return True
        if sum(r.in_use() for r in live) - 1 < self.params.min_usable_paths:
            self.floor_holds += 1
            return True
        return False

    def probes_due(self, now: float, keepalive: bool = False) -> list[tuple[int, int]]:
        """(pid, seq) of each probe to send now, recorded as outstanding.
        ``keepalive``: the connection only receives; probe one of its routes each RTT."""
        due = [r for r in self.routes if r.next_probe <= now] if self.routes_to_probe else []
        if keepalive and now >= self.next_keepalive:
            self.next_keepalive = now + self.probe_interval()
            due += self._keepalive_routes()
        out = []
        credit = self.probes.credit() if due else 0.0
        for route in due:
            # a suspect route's probe is the answer to a loss: never held back
            # (one per loss or per probe timeout); the budget bounds the rest
            if credit < PROBE_WIRE_BYTES and route.state != R_SUSPECT:
                self.probes_deferred += 1
                if route.next_probe <= now:
                    self.schedule_probe(route, now + self.probe_interval())   # not spinning
                continue
            credit -= PROBE_WIRE_BYTES
            pid = route.pids[route.probe_turn % len(route.pids)]
            route.probe_turn += 1
            seq = self.probes.send(route, now)
            # a suspect route waits for its probe's answer or timeout; a bad one is probed on
            self.schedule_probe(route, now + self.probe_interval() if route.state == R_BAD else INF)
            out.append((pid, seq))
        return out

    def _keepalive_routes(self) -> list[RouteHealth]:
        """The next GOOD route, planes in turn (one probe per interval: each
        route is refreshed every few tens of RTTs at a few probes a second),
        unless it has a probe outstanding already."""
        good = [r for r in self.keepalive_order if r.state == R_GOOD]
        if not good:
            return []
        route = good[self.keepalive_turn % len(good)]
        self.keepalive_turn += 1
        return [] if route in self.probes.waiting() else [route]

    def next_deadline(self, keepalive: bool = False) -> float | None:
        t = self.next_skip_expiry if self.n_skip else INF
        if self.routes_to_probe:
            for route in self.routes:
                if route.next_probe < t:
                    t = route.next_probe
        if self.probes.outstanding:
            t = min(t, self.probes.deadline(self.probe_timeout()))
        if keepalive and self.next_keepalive < t:
            t = self.next_keepalive
        return None if t == INF else t

    # --- views ------------------------------------------------------------------------------------
    def probing(self) -> bool:
        """Whether any route is waiting for a probe (cheap check for the hot path)."""
        return bool(self.probes.outstanding) or self.routes_to_probe > 0

    def state_name(self, pid: int) -> str:
        return STATE_NAMES[self.state[pid]]

    def route_state_names(self) -> list[str]:
        return [STATE_NAMES[r.state] for r in self.routes]

    @property
    def usable(self) -> int:
        """EVs data may go on now (GOOD or SKIP)."""
        return sum(s in USABLE for s in self.state)

    def counters(self) -> dict:
        return {"usable": self.usable, "floor_holds": self.floor_holds, "stall_holds": self.stall_holds,
                "ev_swaps": self.swaps, "ecn_migrations": self.ecn_migrations,
                "probe_timeouts": self.probes.timeouts, "probes_deferred": self.probes_deferred,
                "overdue_suspicions": self.overdue_suspicions, "ack_clears": self.ack_clears,
                "assumed_bad": [list(self.paths[p]) for p, s in enumerate(self.state) if s == ASSUMED_BAD],
                "denied": [list(self.paths[p]) for p, s in enumerate(self.state) if s == DENIED]}
