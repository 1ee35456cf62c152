"""The fabric controller: an os-ken (maintained Ryu fork) OpenFlow 1.3 app.

Static tables: when a switch connects it gets its complete table from
`topologies.openflow.tables`, unless it still holds it (a switch that only lost its
controller connection, e.g. a controller restart, keeps its table untouched,
so MRC traffic does not notice). A switch that lost its table (a rebooted
switch) gets it again, old entries wiped first.

Baseline routing emulation (topologies/routing.py): the only thing ever changed
after install is the bucket lists of the T0s' ECMP groups (one per
destination rack). A T0-T1 link that goes down (OFPT_PORT_STATUS) is
withdrawn after --convergence-delay -- from its T0's groups and from the
other T0s' groups toward its rack -- and restored --hold-down after it
comes back. MRC's per-EV entries never change.

The lab runs this module as its own process:

    python -m topologies.openflow.controller --fabric fabric.json --port 16653 \
        [--convergence-delay 5] [--hold-down 2] [--routing-log routing.jsonl]

It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from os_ken import cfg
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3

from topologies.routing import DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN, RoutingEmulation
from topologies.fabric import FabricSpec
from topologies.openflow.tables import SwitchTable, switch_table

LOG = logging.getLogger("mrclab.controller")

# Set by main() before os-ken instantiates the app (os-ken apps take no arguments).
FABRIC: FabricSpec | None = None
ROUTING_ARGS: dict = {}

_REPLIES = ("aggregate", "groups", "ports")


class StaticFabricController(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.datapaths: dict[str, object] = {}
        self.pending: dict[int, dict] = {}  # dpid -> replies gathered on connect
        self.routing = RoutingEmulation(FABRIC, on_apply=self._apply_group, **ROUTING_ARGS)

    # ---- connect: keep an intact table, install a missing one -------------------
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_switch_features(self, ev):
        datapath = ev.msg.datapath
        parser, ofp = datapath.ofproto_parser, datapath.ofproto
        self.pending[datapath.id] = {"ports": []}
        datapath.send_msg(parser.OFPAggregateStatsRequest(
            datapath, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY, 0, 0, parser.OFPMatch()))
        datapath.send_msg(parser.OFPGroupDescStatsRequest(datapath, 0))
        datapath.send_msg(parser.OFPPortDescStatsRequest(datapath, 0))

    @set_ev_cls(ofp_event.EventOFPAggregateStatsReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_aggregate(self, ev):
        self._gathered(ev.msg, "aggregate", ev.msg.body.flow_count)

    @set_ev_cls(ofp_event.EventOFPGroupDescStatsReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_group_desc(self, ev):
        self._gathered(ev.msg, "groups", {g.group_id: _bucket_ports(g.buckets) for g in ev.msg.body})

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_port_desc(self, ev):
        gathered = self.pending.get(ev.msg.datapath.id)
        if gathered is None:
            return
        gathered["ports"] += list(ev.msg.body)
        if not ev.msg.flags & ev.msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            self._gathered(ev.msg, "ports_done", True)

    def _gathered(self, msg, key: str, value) -> None:
        datapath = msg.datapath
        gathered = self.pending.get(datapath.id)
        if gathered is None:
            return
        gathered[key] = value
        if not all(k in gathered for k in ("aggregate", "groups", "ports_done")):
            return
        del self.pending[datapath.id]
        name = FABRIC.switch_of_dpid(datapath.id)
        table = switch_table(FABRIC, name)
        self.datapaths[name] = datapath
        intact = gathered["aggregate"] == len(table.flows) and \
            set(gathered["groups"]) == {g.group_id for g in table.groups}
        self.routing.note("switch_connected", name, table="kept" if intact else "installed")
        if intact:
            LOG.info("%s holds its table: kept", name)
            installed = gathered["groups"]
        else:
            install_table(datapath, table)
            LOG.info("installed %s: %d flows, %d groups", name, len(table.flows), len(table.groups))
            installed = {g.group_id: list(g.ports) for g in table.groups}
        if name in self.routing.withdrawn:  # a T0: routing starts from what it holds
            self.routing.adopt(name, installed)
            for port in gathered["ports"]:
                self.routing.link_state(name, port.port_no, _port_up(port), source="port_desc")

    # ---- routing emulation ------------------------------------------------------
    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def on_port_status(self, ev):
        msg = ev.msg
        name = FABRIC.switch_of_dpid(msg.datapath.id)
        up = _port_up(msg.desc) and msg.reason != msg.datapath.ofproto.OFPPR_DELETE
        LOG.info("port status %s port %d: %s", name, msg.desc.port_no, "up" if up else "down")
        self.routing.link_state(name, msg.desc.port_no, up)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def on_disconnect(self, ev):
        if ev.datapath.id is None:
            return
        name = FABRIC.switch_of_dpid(ev.datapath.id)
        self.pending.pop(ev.datapath.id, None)
        if self.datapaths.get(name) is ev.datapath:
            del self.datapaths[name]
            self.routing.switch_gone(name)
            self.routing.note("switch_disconnected", name)
            LOG.info("%s disconnected", name)

    def _apply_group(self, t0: str, group_id: int, ports: list[int]) -> None:
        datapath = self.datapaths.get(t0)
        if datapath is None:
            return  # disconnected: nothing to reconverge
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        datapath.send_msg(parser.OFPGroupMod(datapath, ofp.OFPGC_MODIFY, ofp.OFPGT_SELECT, group_id,
                                             _buckets(parser, ofp, ports)))
        datapath.send_msg(parser.OFPBarrierRequest(datapath))
        LOG.info("%s ECMP group %d now %s", t0, group_id, ports)


def _port_up(desc) -> bool:
    return not (desc.state & ofproto_v1_3.OFPPS_LINK_DOWN or desc.config & ofproto_v1_3.OFPPC_PORT_DOWN)


def _bucket_ports(buckets) -> list[int]:
    return [a.port for b in buckets for a in b.actions if hasattr(a, "port")]


def _buckets(parser, ofp, ports):
    # No watch_port: OVS must not skip a dead bucket by itself (that would be
    # instant convergence); only the routing emulation removes it.
    return [parser.OFPBucket(weight=1, watch_port=ofp.OFPP_ANY, watch_group=ofp.OFPG_ANY,
                             actions=[parser.OFPActionOutput(p)]) for p in ports]


def install_table(datapath, table: SwitchTable) -> None:
    """Wipe the switch and write its whole static table, then a barrier."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    datapath.send_msg(
        parser.OFPFlowMod(
            datapath, command=ofp.OFPFC_DELETE, table_id=ofp.OFPTT_ALL,
            out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
        )
    )
    datapath.send_msg(parser.OFPGroupMod(datapath, command=ofp.OFPGC_DELETE, group_id=ofp.OFPG_ALL))
    for group in table.groups:
        datapath.send_msg(
            parser.OFPGroupMod(datapath, ofp.OFPGC_ADD, ofp.OFPGT_SELECT, group.group_id,
                               _buckets(parser, ofp, group.ports))
        )
    for flow in table.flows:
        actions = [_action(parser, kind, arg) for kind, arg in flow.actions]
        instructions = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(
            parser.OFPFlowMod(
                datapath, priority=flow.priority, match=parser.OFPMatch(**dict(flow.match)),
                instructions=instructions,
            )
        )
    datapath.send_msg(parser.OFPBarrierRequest(datapath))


def _action(parser, kind: str, arg):
    if kind == "output":
        return parser.OFPActionOutput(arg)
    if kind == "group":
        return parser.OFPActionGroup(arg)
    if kind == "set_eth_src":
        return parser.OFPActionSetField(eth_src=arg)
    raise ValueError(f"unknown action {kind!r}")


def main(argv=None) -> int:
    global FABRIC
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", required=True, help="fabric description (JSON)")
    parser.add_argument("--port", type=int, required=True, help="OpenFlow TCP port on 127.0.0.1")
    parser.add_argument("--convergence-delay", type=float, default=DEFAULT_CONVERGENCE_DELAY,
                        help="s from a T0 uplink's link-down to its withdrawal from the ECMP group "
                             "(a BGP-like hold time; default %(default)s)")
    parser.add_argument("--hold-down", type=float, default=DEFAULT_HOLD_DOWN,
                        help="s from a withdrawn uplink's link-up to its restore (default %(default)s)")
    parser.add_argument("--routing-log", help="JSON-lines log of route withdrawals/restores")
    args = parser.parse_args(argv)
    with open(args.fabric) as f:
        FABRIC = FabricSpec.from_dict(json.load(f))
    ROUTING_ARGS.update(convergence_delay=args.convergence_delay, hold_down=args.hold_down,
                        log_path=args.routing_log)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    cfg.CONF(
        args=["--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", str(args.port)],
        project="os_ken",
    )
    app_manager.AppManager.run_apps([__name__])
    return 0


if __name__ == "__main__":
    sys.exit(main())
