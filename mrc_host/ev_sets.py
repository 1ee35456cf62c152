"""Which EVs of a plane carry data: the active set, spread evenly over the
plane's routes, and the backup set swapped in when a route leaves use
(path_health.py's "EV sets"). Functions over a plane's EvHealth objects,
each with ``active`` and ``route`` (``route.in_use()``)."""

from __future__ import annotations


def backup_set(evs: list, want: int) -> list:
    """The EVs of one plane beyond its first ``want``, taking the routes in turn
    (so the active ones spread evenly over them): the plane's backup set."""
    if want <= 0 or want >= len(evs):
        return []
    by_route: dict = {}
    for e in evs:
        by_route.setdefault(e.route, []).append(e)
    columns = list(by_route.values())
    order = [col[i] for i in range(max(map(len, columns))) for col in columns if i < len(col)]
    return order[want:]


def rebalance(evs: list, want: int) -> int:
    """Active EVs off routes out of use, then spread evenly over the plane's routes
    in use, ``want`` of them if there are enough; how many EVs were swapped in."""
    if want <= 0 or want >= len(evs):
        return 0
    active = [e for e in evs if e.active and e.route.in_use()]
    spare = [e for e in evs if not e.active and e.route.in_use()]
    if not active and not spare:
        return 0        # every route of the plane is out: nothing to swap to
    for e in evs:
        if e.active and not e.route.in_use():
            e.active = False
    count: dict = {}
    for e in evs:
        if e.route.in_use():
            count.setdefault(e.route, 0)
            count[e.route] += e.active
    swaps = 0
    while True:
        n_active = sum(count.values())
        low = min((r for r in count if any(e.route is r for e in spare)), key=count.get, default=None)
        if low is None:
            break
        high = max(count, key=count.get)
        if n_active < want:
            pass                                   # fill up to the plane's share
        elif count[high] - count[low] > 1:
            out = next(e for e in evs if e.active and e.route is high)
            out.active = False
            spare.append(out)
            count[high] -= 1
        else:
            break
        pin = next(e for e in spare if e.route is low)
        spare.remove(pin)
        pin.active = True
        count[low] += 1
        swaps += 1
    return swaps
