"""A pcap captured from a real exchange between two agents decodes with the
scapy layer (root: packet capture on loopback)."""

import time

from scapy.layers.inet import UDP
from scapy.sendrecv import AsyncSniffer
from scapy.utils import rdpcap, wrpcap

from mrc_host import wire
from mrc_host.agent import Agent
from mrc_host.scapy_layer import MRC, MRCAck, MRCData
from tests.unit.test_agent import configs, drive


def test_pcap_of_a_real_exchange_decodes(tmp_path):
    sniffer = AsyncSniffer(iface="lo", filter="udp", store=True)
    sniffer.start()
    time.sleep(0.5)  # the capture socket must be open before traffic starts
    ca, cb = configs(base=60)
    with Agent(ca) as a, Agent(cb) as b:
        b.register_buffer("a", bytearray(1 << 16))
        handle = a.write("b", bytes(range(256)) * 64, remote_offset=0, msg_id=9)
        assert drive([a, b], lambda: handle.done)
    time.sleep(0.3)
    captured = sniffer.stop()
    pcap = tmp_path / "mrc.pcap"
    wrpcap(str(pcap), captured)
    packets = [p for p in rdpcap(str(pcap)) if p.haslayer(UDP)]
    data = [p for p in packets if p.haslayer(MRCData)]
    acks = [p for p in packets if p.haslayer(MRCAck)]
    assert data and acks, f"captured {len(packets)} UDP packets, none decoded as MRC"
    first = data[0]
    assert first[MRC].version == 1 and first[MRCData].msg_id == 9
    assert first[UDP].sport == wire.EV_PORT_BASE + first[MRC].ev  # the EV rides in the source port
    # loopback shows each packet twice (out and in): count each PSN once
    lengths = {p[MRCData].psn: p[MRCData].length for p in data}
    assert sum(lengths.values()) == 256 * 64
