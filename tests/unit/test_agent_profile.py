"""bench/agent_profile.py's reading of py-spy's samples and of the agents' counters."""

from lab.runners.agent_profile import parse_collapsed, per_packet_counts

STACKS = [
    "serve (/x/lab/inhost/workerloop.py);poll (/x/mrc_host/agent.py);sendto (/x/mrc_host/agent_sockets.py) 6\n",
    "serve (/x/lab/inhost/workerloop.py);poll (/x/mrc_host/agent.py) 3\n",
    "serve (/x/lab/inhost/workerloop.py);poll (/x/mrc_host/agent.py);select (/usr/lib/python3.11/selectors.py) 1\n",
    "garbage line without a count\n", "\n",
]


def test_shares_are_of_all_samples_self_at_the_leaf_total_anywhere_in_the_stack():
    profile = parse_collapsed(STACKS)
    assert profile.samples == 10
    by_name = {s.function: (s.self_share, s.total_share) for s in profile.functions}
    assert by_name == {"sendto (mrc_host/agent_sockets.py)": (0.6, 0.6), "poll (mrc_host/agent.py)": (0.3, 1.0),
                       "select (selectors.py)": (0.1, 0.1)}
    assert [s.function for s in profile.top(1)] == ["sendto (mrc_host/agent_sockets.py)"]


def test_a_recursive_frame_counts_once_in_its_total():
    profile = parse_collapsed(["f (a.py);f (a.py);g (a.py) 4\n"])
    assert {s.function: s.total_share for s in profile.functions} == {"g (a.py)": 1.0}
    assert parse_collapsed([]).samples == 0


def test_counts_per_delivered_packet_name_only_what_the_agents_counted():
    assert per_packet_counts({"acks_sent": 50, "wakes": 30, "selects": 60, "other": 1}, 100) == \
        {"acks_sent": 0.5, "wakes": 0.3, "selects": 0.6}
    assert per_packet_counts({"acks_sent": 5}, 0) == {}

