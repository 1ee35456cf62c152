"""The connection interface, the transport registry and the shared RTT estimator."""

import inspect

import pytest

from mrc_host import wire
from mrc_host.agent import Agent, AgentConfig
from mrc_host.baseline import BaselineConnection
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.multirail import MultiRailBaseline
from mrc_host.params import TransportParams
from mrc_host.rtt import RttEstimator
from mrc_host.transport import TRANSPORTS, Connection, ConnectionSetup, transport

PATHS = make_paths(range(2), range(4))
CLASSES = [MrcConnection, BaselineConnection, MultiRailBaseline]
METHODS = [name for name, member in vars(Connection).items()
           if callable(member) and not name.startswith("_")]
PROPERTIES = [name for name, member in vars(Connection).items() if isinstance(member, property)]


def test_the_protocol_names_what_the_agent_calls():
    assert {"receive", "datagrams_to_send", "timer", "next_deadline", "write", "next_event",
            "set_recv_buffer", "stats"} <= set(METHODS)
    assert {"recv_buffer", "idle"} <= set(PROPERTIES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_connection_class_satisfies_the_protocol(cls):
    conn = cls(1, PATHS, TransportParams(), peer="b")
    assert isinstance(conn, Connection)
    for name in METHODS:   # same parameters, kinds and defaults, not just the name
        want = inspect.signature(getattr(Connection, name))
        got = inspect.signature(getattr(cls, name))
        assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in want.parameters.values()], f"{cls.__name__}.{name}"
    for name in PROPERTIES:
        assert isinstance(inspect.getattr_static(cls, name), property), f"{cls.__name__}.{name}"


def test_an_object_missing_a_method_is_not_a_connection():
    class Half:
        conn_id, counters, paths = 1, None, []

        def receive(self, datagram, now, ecn_ce=False, plane=None):
            pass
    assert not isinstance(Half(), Connection)


@pytest.mark.parametrize("cls", [BaselineConnection, MultiRailBaseline], ids=lambda c: c.__name__)
@pytest.mark.parametrize("typo", ["policy", "cc", "flowkey"])
def test_a_parameter_a_core_does_not_take_is_an_error_naming_it(cls, typo):
    with pytest.raises(TypeError, match=typo):
        cls(1, PATHS, TransportParams(), **{typo: "x"})


def test_registry_ports_and_factories():
    assert {name: t.port for name, t in TRANSPORTS.items()} == \
        {"mrc": wire.MRC_PORT, "baseline": wire.BASELINE_PORT}
    for name, cls in (("mrc", MrcConnection), ("baseline", MultiRailBaseline)):
        conn = transport(name).connect(ConnectionSetup(7, PATHS, TransportParams(), "b", "a",
                                                       1 << 16, "round_robin", "aimd"))
        assert type(conn) is cls and conn.conn_id == 7 and isinstance(conn, Connection)


@pytest.mark.parametrize("name", ["rdma", "MRC", "", None])
def test_an_unknown_transport_is_named_with_the_known_ones(name):
    with pytest.raises(ValueError, match=r"unknown transport .*: use one of mrc, baseline"):
        transport(name)


def test_the_agent_refuses_an_unknown_transport_before_opening_sockets():
    cfg = AgentConfig(host_id="a", plane_ips=["127.0.0.1"], peers={}, transport="roce")
    with pytest.raises(ValueError, match="unknown transport 'roce'"):
        Agent(cfg)


# --- the RTT estimator ------------------------------------------------------------------------
def estimator(granularity, rto_min=0.0, rto_max=10.0):
    return RttEstimator(rto_initial=0.1, rto_min=rto_min, rto_max=rto_max, granularity=granularity)


def test_first_sample_then_rfc6298_smoothing():
    e = estimator(0.0)
    assert (e.srtt, e.rto, e.current()) == (None, 0.1, 0.1)
    e.sample(0.010)
    assert e.srtt == 0.010 and e.rttvar == 0.005 and e.rto == pytest.approx(0.030)
    e.sample(0.020)
    assert e.rttvar == pytest.approx(0.75 * 0.005 + 0.25 * 0.010)
    assert e.srtt == pytest.approx(0.875 * 0.010 + 0.125 * 0.020)
    assert e.rto == pytest.approx(e.srtt + 4 * e.rttvar)
    assert e.min_rtt == 0.010


def test_granularity_floors_the_variance_term_only_where_it_is_set():
    steady = [0.004] * 40          # rttvar decays towards 0
    mrc, base = estimator(TransportParams().rto_granularity), \
        estimator(TransportParams().baseline_rto_granularity)
    for rtt in steady:
        mrc.sample(rtt)
        base.sample(rtt)
    assert mrc.rto == pytest.approx(0.004 + 0.0005)
    assert base.rto == pytest.approx(0.004, abs=1e-6)


def test_clamps_and_backoff():
    e = estimator(0.0, rto_min=0.05, rto_max=0.4)
    e.sample(0.001)
    assert e.rto == 0.05
    e.on_timeout()
    e.on_timeout()
    assert (e.backoff, e.current()) == (4, pytest.approx(0.2))
    e.on_timeout()
    e.on_timeout()                 # no doubling once the backed-off RTO reaches rto_max
    assert (e.backoff, e.current()) == (8, 0.4)
    e.reset_backoff()
    assert e.current() == 0.05
    e.sample(10.0)
    assert e.rto == 0.4


def test_each_core_uses_its_own_floor():
    p = TransportParams(rto_granularity=0.25, baseline_rto_granularity=0.125)
    assert MrcConnection(1, PATHS, p).sender.rtt.granularity == 0.25
    assert BaselineConnection(1, PATHS, p).rtt.granularity == 0.125
