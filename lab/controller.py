"""The fabric controller: an os-ken (maintained Ryu fork) OpenFlow 1.3 app.

Static mode: when a switch connects it gets its complete table from
`topologies.tables` (old entries wiped first), and nothing is ever changed
in response to a failure. A switch that reconnects (a rebooted switch) gets
the same table again. The lab runs this module as its own process:

    python -m lab.controller --fabric fabric.json --port 16653

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
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3

from topologies.fabric import FabricSpec
from topologies.tables import SwitchTable, switch_table

LOG = logging.getLogger("mrclab.controller")

# Set by main() before os-ken instantiates the app (os-ken apps take no arguments).
FABRIC: FabricSpec | None = None


class StaticFabricController(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_switch_features(self, ev):
        datapath = ev.msg.datapath
        name = FABRIC.switch_of_dpid(datapath.id)
        table = switch_table(FABRIC, name)
        install_table(datapath, table)
        LOG.info("installed %s: %d flows, %d groups", name, len(table.flows), len(table.groups))


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
        buckets = [parser.OFPBucket(weight=1, actions=[parser.OFPActionOutput(p)]) for p in group.ports]
        datapath.send_msg(
            parser.OFPGroupMod(datapath, ofp.OFPGC_ADD, ofp.OFPGT_SELECT, group.group_id, buckets)
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
    args = parser.parse_args(argv)
    with open(args.fabric) as f:
        FABRIC = FabricSpec.from_dict(json.load(f))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    cfg.CONF(
        args=["--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", str(args.port)],
        project="os_ken",
    )
    app_manager.AppManager.run_apps([__name__])
    return 0


if __name__ == "__main__":
    sys.exit(main())
