"""The per-route record a sender keeps (mrc_host/routes.py): silences and drop spans."""

from mrc_host.routes import DROP_SPANS_KEPT, ROUTE_SILENCE_S, RouteLog


def test_drops_close_in_send_time_form_one_span_and_far_ones_their_own():
    log = RouteLog([(0, 0), (0, 1)])
    for sent in (10.02, 10.035, 10.05):                     # a failure swallowing one packet after another
        log.on_drop(1, sent)
    log.on_drop(1, 3.0)                                     # declared late: a random loss long before
    log.on_drop(1, 10.01)                                   # declared out of order, sent just before the span
    assert log.drop_spans[1] == [[3.0, 3.0, 1], [10.01, 10.05, 4]]   # [first, last, packets]
    assert log.dropped == [0, 5] and log.drop_spans[0] == []
    assert log.records(["GOOD", "GOOD"])[1]["drop_spans"] == [[3.0, 3.0, 1], [10.01, 10.05, 4]]


def test_a_drop_found_delivered_after_all_leaves_its_span():
    log = RouteLog([(0, 0)])
    for sent in (5.0, 10.0, 10.01):
        log.on_drop(0, sent)
    log.on_delivered_after_all(0, 10.01)           # reordering after all: one packet fewer in its span
    assert log.drop_spans[0] == [[5.0, 5.0, 1], [10.0, 10.01, 1]] and log.dropped == [2]
    log.on_delivered_after_all(0, 5.0)             # a span left empty is forgotten
    assert log.drop_spans[0] == [[10.0, 10.01, 1]] and log.dropped == [1]
    log.on_delivered_after_all(0)                  # send time unknown: the count only
    assert log.drop_spans[0] == [[10.0, 10.01, 1]] and log.dropped == [0]


def test_a_route_that_drops_now_and_then_keeps_a_bounded_record():
    log = RouteLog([(0, 0)])
    gap = 2 * ROUTE_SILENCE_S
    for i in range(DROP_SPANS_KEPT + 10):
        log.on_drop(0, i * gap)
    spans = log.drop_spans[0]
    assert len(spans) == DROP_SPANS_KEPT
    assert spans[-1][1] == (DROP_SPANS_KEPT + 9) * gap       # the last span widened to the newest drop
    assert log.dropped[0] == DROP_SPANS_KEPT + 10
