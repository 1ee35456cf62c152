"""The server agent's requests without a pipe (lab/plumbing/server_agent.py ServerAgent.handle),
and the runner's channel (topologies/cluster/server_channel.py) against a stand-in agent run locally:
replies matched to calls, errors and silences turned into one-line ChannelErrors."""

import json
import os
import sys
import time

import pytest

from topologies.port_program.lossless import Thresholds
from topologies.port_program.port_program import PortConfig
from lab.plumbing.server_agent import ServerAgent
from topologies.cluster.server_channel import ChannelError, ServerChannel


def ask(agent: ServerAgent, op: str, request_id: int = 1, **args) -> dict:
    return json.loads(agent.handle(json.dumps({"id": request_id, "op": op, "args": args})))


@pytest.mark.parametrize("line, says", [
    ("garbage", "not JSON"),
    ("[1, 2]", "a request is"),
    ('{"id": 1, "op": 5}', "a request is"),
    ('{"id": 1, "op": "format_disk"}', "unknown op 'format_disk'"),
    ('{"id": 1, "op": "clock", "args": [1]}', "args of clock must be an object"),
    ('{"id": 1, "op": "clock", "args": {"when": 1}}', "clock: "),
    ('{"id": 1, "op": "port_program", "args": {"call": "cleanup_all"}}', "not a call the agent makes"),
    ('{"id": 1, "op": "port_program", "args": {"call": "_modify"}}', "not a call the agent makes"),
    ('{"id": 1, "op": "read", "args": {"paths": ["/etc/shadow"]}}', "under /proc or /sys only"),
    ('{"id": 1, "op": "read", "args": {"paths": ["/proc/../etc/shadow"]}}', "under /proc or /sys only"),
    ('{"id": 1, "op": "port_program", "args": {"call": "attach_many", "args": [{"p": {"rate": 1}}]}}',
     "bad port config"),
])
def test_a_bad_request_gets_a_one_line_error_and_is_counted(line, says):
    agent = ServerAgent(find_pids=lambda names: pytest.fail("no node is looked up"))
    reply = json.loads(agent.handle(line))
    assert reply["ok"] is False and says in reply["error"] and "\n" not in reply["error"]
    assert agent.malformed == 1
    assert json.loads(agent.handle('{"id": 9, "op": "clock"}'))["ok"]   # and it carries on


def test_the_agent_says_what_it_is_and_reads_its_clock():
    agent = ServerAgent()
    hello = ask(agent, "hello")["result"]
    assert hello["pid"] == os.getpid() and hello["protocol"] == 1 and hello["cores"] >= 1
    before = time.clock_gettime(time.CLOCK_MONOTONIC)
    reply = ask(agent, "clock", request_id=7)
    assert reply["id"] == 7 and before <= reply["result"] <= time.clock_gettime(time.CLOCK_MONOTONIC)


def test_a_node_is_looked_up_once_and_its_namespace_entered_by_its_pid():
    asked = []

    def find(names):
        asked.append(list(names))
        return {name: os.getpid() for name in names}

    agent = ServerAgent(find_pids=find)
    assert ask(agent, "node_pids", names=["t0p4r0", "t1p4s0"])["result"] == {"t0p4r0": os.getpid(),
                                                                              "t1p4s0": os.getpid()}
    snmp6 = ask(agent, "read", paths=["/proc/net/snmp6"], node="t0p4r0")["result"]["/proc/net/snmp6"]
    assert snmp6 == open(f"/proc/{os.getpid()}/net/snmp6").read()
    assert asked == [["t0p4r0", "t1p4s0"]]
    assert ask(agent, "read", paths=["/proc/no-such-file"])["result"] == {"/proc/no-such-file": None}


def test_a_command_runs_and_its_status_and_output_come_back():
    agent = ServerAgent()
    assert ask(agent, "run", argv=["sh", "-c", "echo here; echo there >&2; exit 3"])["result"] == {
        "rc": 3, "stdout": "here\n", "stderr": "there\n"}
    reply = ask(agent, "run", argv=["sleep", "5"], timeout=0.2)
    assert reply["ok"] is False and "ran over 0.2 s" in reply["error"]


def test_a_missing_node_is_an_error_not_a_crash():
    from topologies.srv6.routing import RoutingSetupError

    def find(names):
        raise RoutingSetupError(f"routers without one Mininet shell: missing {names}")

    reply = ask(ServerAgent(find_pids=find), "run", argv=["true"], node="t0p9r9")
    assert reply["ok"] is False and "missing ['t0p9r9']" in reply["error"]


@pytest.mark.parametrize("config", [
    PortConfig(rate_bps=10_000_000),
    PortConfig(rate_bps=80_000_000, trim_threshold=30_000, ecn=False, drop_probability=0.01),
    PortConfig(rate_bps=10_000_000, trimming=False, lossless=Thresholds(xoff=40_000, xon=20_000, queue_limit=80_000),
               port_bit=3),
])
def test_a_port_config_crosses_the_channel_unchanged(config):
    assert PortConfig.from_json(json.loads(json.dumps(config.to_json()))) == config


# --- the channel, against a stand-in agent on this machine ----------------------------
STAND_IN = r"""
import json, sys, time
print(json.dumps({"id": 0, "ok": True, "result": {"hostname": "stand-in"}}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    op = request["op"]
    if op == "clock":
        result = time.clock_gettime(time.CLOCK_MONOTONIC) + 1000.0
    elif op == "silent":
        continue
    elif op == "exit":
        sys.exit(0)
    elif op == "fail":
        print(json.dumps({"id": request["id"], "ok": False, "error": "it broke"}), flush=True)
        continue
    else:
        result = request["args"]
    print("a stray line that is not a reply", flush=True)
    print(json.dumps({"id": request["id"], "ok": True, "result": result}), flush=True)
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    config = tmp_path / "ssh_config"
    config.write_text("")
    channel = ServerChannel("B", ssh_config=config, log=tmp_path / "agent.log")
    channel.command = [sys.executable, "-u", "-c", STAND_IN]
    yield channel.open(timeout=10)
    channel.close(timeout=5)


def test_the_channel_matches_replies_to_calls_and_measures_the_clock(stand_in):
    assert stand_in.hello == {"hostname": "stand-in"}
    assert stand_in.call("echo", x=1) == {"x": 1}
    offset, bound = stand_in.clock_offset(samples=8)
    assert 0 < bound < 0.05 and abs(offset - 1000.0) <= bound + 1e-6


def test_an_error_reply_is_a_channel_error_and_the_channel_stays(stand_in):
    with pytest.raises(ChannelError, match="B: fail: it broke"):
        stand_in.call("fail")
    assert stand_in.call("echo", y=2) == {"y": 2}


def test_a_silent_agent_times_out_and_the_channel_closes(stand_in):
    with pytest.raises(ChannelError, match="did not answer silent in 0.3 s"):
        stand_in.call("silent", reply_within=0.3)
    assert not stand_in.alive
    with pytest.raises(ChannelError, match="did not answer silent"):
        stand_in.call("echo")


def test_an_agent_that_exits_fails_the_call_waiting_on_it(stand_in):
    with pytest.raises(ChannelError, match="exited|gone"):
        stand_in.call("exit", reply_within=10)
    assert not stand_in.alive


def test_an_agent_refused_at_start_says_why(tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text("")
    channel = ServerChannel("B", ssh_config=config)
    channel.command = [sys.executable, "-c", 'print(\'{"id": 0, "ok": false, "error": "lab in use by pid 7"}\')']
    with pytest.raises(ChannelError, match="B: start: lab in use by pid 7"):
        channel.open(timeout=10)
