"""Throughput of two host agents on loopback (no root needed).

One sender and one receiver agent, each its own process; 127.0.x.y addresses
stand in for planes (loopback accepts all of 127/8). With ``--wire ipv6`` or
``--wire paper`` (root) the benchmark moves into a network namespace of its own
and puts IPv6 plane addresses on its loopback: the agents then send plain IPv6
UDP as the srv6 data plane's baseline does, or the paper's IPv6-in-IPv6 packet
as its MRC does (mrc_host/encap.py), each to the peer's own address as its
route. The sender writes
``--mb`` MB as ``--msg-kb`` KB messages of ``--payload``-byte packets, keeping
``--outstanding`` messages in flight, and waits for every ack.

    .venv/bin/python bench/agent_throughput.py --mb 100
    .venv/bin/python bench/agent_throughput.py --mb 50 --transport baseline
    .venv/bin/python bench/agent_throughput.py --mb 20 --profile   # cProfile both agents
    .venv/bin/python bench/agent_throughput.py --mb 20 --payload 8192 --cc nscc --line-rate-mbps 10
    sudo .venv/bin/python bench/agent_throughput.py --mb 50 --payload 8192 --wire paper

Prints data packets/s, goodput, CPU seconds per packet of each process and
the retransmit count.
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import io
import json
import multiprocessing as mp
import os
import pstats
import queue
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mrc_host.agent import Agent, AgentConfig  # noqa: E402


WIRES = ("ipv4", "ipv6", "paper")


def plane_addresses(wire: str, planes: int) -> dict[str, list[str]]:
    if wire == "ipv4":
        return {"tx": [f"127.0.{10 + p}.1" for p in range(planes)],
                "rx": [f"127.0.{10 + p}.2" for p in range(planes)]}
    return {"tx": [f"fd00:be:{p}::1" for p in range(planes)], "rx": [f"fd00:be:{p}::2" for p in range(planes)]}


def make_configs(a):
    ips = plane_addresses(a.wire, a.planes)
    common = dict(evs=list(range(a.evs)), payload_size=a.payload, transport=a.transport,
                  cc=a.cc, params={"cwnd_init": a.cwnd, "cwnd_max": max(a.cwnd, 1024),
                                   "line_rate_bps": a.line_rate_mbps * 1e6},
                  recv_buffer_size=a.msg_kb * 1024 * a.outstanding * 2)
    if a.wire != "ipv4":
        # each route to a peer is the peer's own address (one "T1"), as within a rack
        routes = {me: {peer: [[ip] for ip in ips[peer]]} for me, peer in (("tx", "rx"), ("rx", "tx"))}
        common_of = {me: dict(common, t1s=1, route_addresses=routes[me], encapsulate=a.wire == "paper")
                     for me in ("tx", "rx")}
    else:
        common_of = {"tx": common, "rx": common}
    return (AgentConfig(host_id="tx", plane_ips=ips["tx"], peers={"rx": ips["rx"]},
                        listen_ips=ips["tx"], **common_of["tx"]),
            # one wildcard receive socket, as in a host namespace: arrival order is kept
            AgentConfig(host_id="rx", plane_ips=ips["rx"], peers={"tx": ips["tx"]},
                        listen_ips=None, **common_of["rx"]))


def own_ipv6_loopback(planes: int) -> None:
    """Move this process into a network namespace of its own, its loopback up with
    both agents' IPv6 plane addresses (root)."""
    if os.geteuid() != 0:
        sys.exit("agent_throughput: --wire ipv6 and paper need root (a network namespace of their own)")
    if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0:   # CLONE_NEWNET
        sys.exit(f"agent_throughput: cannot make a network namespace: {os.strerror(ctypes.get_errno())}")
    ips = plane_addresses("ipv6", planes)
    batch = "link set dev lo up\n" + "".join(f"addr add {ip}/128 dev lo nodad\n" for ip in ips["tx"] + ips["rx"])
    subprocess.run(["ip", "-batch", "-"], input=batch, text=True, check=True)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def profiled(fn, enabled, *args):
    if not enabled:
        return fn(*args), None
    prof = cProfile.Profile()
    result = prof.runcall(fn, *args)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
    return result, s.getvalue()


PORTS_TAKEN = ("(another copy of this benchmark, or an MRC agent, holds the wire's ports on this "
               "loopback: run it in a network namespace of its own, as bench does)")


def start_agent(role, cfg, q):
    """The agent, or None after telling the parent why it could not bind its sockets."""
    try:
        return Agent(cfg)
    except OSError as exc:
        q.put(("error", f"{role}: {exc.strerror or exc} {PORTS_TAKEN}"))
        return None


def run_receiver(cfg, a, n_msgs, q, ready):
    agent = start_agent("receiver", cfg, q)
    ready.set()
    if agent is None:
        return

    def body():
        got = agent.run_until(lambda: len(agent.messages) >= n_msgs, a.timeout)
        # keep answering (acks, retransmissions) until the sender is done
        agent.run_until(lambda: False, a.linger)
        return got
    cpu0 = cpu_seconds()
    got, prof = profiled(body, a.profile)
    q.put(("rx", {"complete": got, "cpu": cpu_seconds() - cpu0,
                  "stats": agent.stats()["peers"]["tx"], "garbage": agent.garbage, "profile": prof}))
    agent.close()


def run_sender(cfg, a, n_msgs, q, ready):
    agent = start_agent("sender", cfg, q)
    if agent is None:
        return
    ready.wait()
    msg = os.urandom(a.msg_kb * 1024)
    slots = a.outstanding * 2

    def body():
        pending = []
        t0 = time.monotonic()
        for i in range(n_msgs):
            if len(pending) >= a.outstanding:
                agent.run_until(lambda: pending[0].done, a.timeout)
                pending = [h for h in pending if not h.done]
            pending.append(agent.write("rx", msg, (i % slots) * len(msg), msg_id=i + 1))
        ok = agent.wait(pending, a.timeout)
        return ok, time.monotonic() - t0
    cpu0 = cpu_seconds()
    (ok, elapsed), prof = profiled(body, a.profile)
    q.put(("tx", {"complete": ok, "elapsed": elapsed, "cpu": cpu_seconds() - cpu0,
                  "stats": agent.stats()["peers"]["rx"], "send_errors": agent.send_errors,
                  "profile": prof}))
    agent.close()


def collect(q, procs, timeout_s):
    """Both agents' results, or {"error": why} as soon as one could not start, died without a
    result or the time ran out; the other is then stopped."""
    res, deadline = {}, time.monotonic() + timeout_s
    while len(res) < len(procs):
        try:
            kind, value = q.get(timeout=0.5)
        except queue.Empty:
            died = [p.name for p in procs if p.exitcode not in (None, 0)]
            if died or time.monotonic() > deadline:
                res = {"error": f"{', '.join(died)} died without a result" if died else
                       f"no result after {timeout_s:g} s"}
            else:
                continue
        else:
            res[kind] = value
        if "error" in res:
            break
    for p in procs:
        if "error" in res and p.is_alive():
            p.terminate()
        p.join()
    return res


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--msg-kb", type=int, default=64)
    ap.add_argument("--payload", type=int, default=1024)
    ap.add_argument("--outstanding", type=int, default=8, help="messages in flight")
    ap.add_argument("--planes", type=int, default=8)
    ap.add_argument("--evs", type=int, default=8, help="EVs per plane")
    ap.add_argument("--cwnd", type=int, default=256)
    ap.add_argument("--cc", default="fixed")
    ap.add_argument("--line-rate-mbps", type=float, default=0.0,
                    help="pace at this NIC line rate per plane, as the lab's NSCC runs do (0: unpaced)")
    ap.add_argument("--transport", default="mrc", choices=["mrc", "baseline"])
    ap.add_argument("--wire", default="ipv4", choices=WIRES,
                    help="ipv4: UDP on 127/8; ipv6: UDP over IPv6; paper: MRC's IPv6-in-IPv6 packet "
                         "(ipv6 and paper: root, in a network namespace of its own)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--linger", type=float, default=0.5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of text")
    a = ap.parse_args(argv)
    if a.wire == "paper" and a.transport != "mrc":
        ap.error("--wire paper is MRC's packet: --transport mrc")
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.wire != "ipv4":
        own_ipv6_loopback(a.planes)
    n_msgs = max(1, int(a.mb * 1024 / a.msg_kb))
    tx_cfg, rx_cfg = make_configs(a)
    ctx = mp.get_context("fork")
    q, ready = ctx.Queue(), ctx.Event()
    rx = ctx.Process(target=run_receiver, args=(rx_cfg, a, n_msgs, q, ready))
    tx = ctx.Process(target=run_sender, args=(tx_cfg, a, n_msgs, q, ready))
    rx.start()
    tx.start()
    res = collect(q, (rx, tx), a.timeout + 30)
    if "error" in res:
        print(f"agent_throughput: {res['error']}", file=sys.stderr)
        return 2
    t, r = res["tx"], res["rx"]
    pkts = t["stats"]["data_sent"]
    first = pkts - t["stats"]["retransmits"]
    out = {
        "transport": a.transport, "wire": a.wire, "complete": t["complete"] and r["complete"],
        "data_packets": pkts, "retransmits": t["stats"]["retransmits"],
        "timeouts": t["stats"]["timeouts"], "elapsed_s": round(t["elapsed"], 3),
        "data_pkts_per_s": round(first / t["elapsed"]),
        "goodput_mbps": round(n_msgs * a.msg_kb * 1024 * 8 / t["elapsed"] / 1e6, 1),
        "tx_cpu_s": round(t["cpu"], 3), "rx_cpu_s": round(r["cpu"], 3),
        "tx_cpu_us_per_pkt": round(t["cpu"] / pkts * 1e6, 2),
        "rx_cpu_us_per_pkt": round(r["cpu"] / max(1, r["stats"]["data_received"]) * 1e6, 2),
        "acks_sent": r["stats"]["acks_sent"], "acks_received": t["stats"]["acks_received"],
        "rx_duplicates": r["stats"]["duplicates"], "send_errors": t["send_errors"],
        "assumed_bad_paths": len(t["stats"].get("assumed_bad", [])),
    }
    if a.profile:
        print("=== sender profile ===\n" + (t["profile"] or ""))
        print("=== receiver profile ===\n" + (r["profile"] or ""))
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")
    return 0 if out["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
