"""Constants written in more than one language agree: mrc_host/wire.py is the
definition; the eBPF port program (C) and the port-map records mirror it."""

import re
import struct
from pathlib import Path

from mrc_host import wire
from topologies.port_program import port_maps, port_program
from topologies.openflow import tables

C_SOURCE = (Path(__file__).resolve().parents[2] / "topologies" / "port_program" / "port_program.c").read_text()
DEFINES = {m.group(1): int(m.group(2), 0)
           for m in re.finditer(r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", C_SOURCE, re.M)}


def c_struct(name: str) -> list[tuple[str, str]]:
    body = re.search(r"struct %s \{(.*?)\};" % name, C_SOURCE, re.S).group(1)
    return re.findall(r"^\s*(__u\d+)\s+(\w+);", body, re.M)


def test_the_c_program_uses_the_wire_values():
    assert DEFINES["MRC_PORT"] == wire.MRC_PORT
    assert DEFINES["BASELINE_PORT"] == wire.BASELINE_PORT
    assert DEFINES["MRC_VERSION"] == wire.VERSION
    assert DEFINES["T_DATA"] == wire.T_DATA
    assert DEFINES["T_PROBE_REPLY"] == wire.T_PROBE_REPLY
    assert DEFINES["FL_TRIMMED"] == wire.F_TRIMMED
    assert DEFINES["MRC_COMMON_LEN"] == wire.COMMON_LEN


def test_the_port_map_flags_mirror_the_c_program():
    for name in ("CFG_TRIM", "CFG_ECN", "CFG_BLACKHOLE", "CFG_LOSSLESS", "G_FORCE_TAILDROP"):
        assert getattr(port_maps, name) == DEFINES[name], name
        assert getattr(port_program, name) == DEFINES[name], name


def test_port_cfg_record_is_struct_port_cfg_field_for_field():
    fields = c_struct("port_cfg")
    assert [name for _type, name in fields] == list(port_maps.PortCfg._fields)
    sizes = {"__u64": "Q", "__u32": "I"}
    assert port_maps.CFG.format == "=" + "".join(sizes[t] for t, _name in fields)
    assert port_maps.CFG.size == struct.calcsize("=" + "".join(sizes[t] for t, _ in fields))


def test_port_state_record_is_struct_port_state_field_for_field():
    fields = c_struct("port_state")   # its bpf_spin_lock reads as the __u32 `lock`
    assert [name for _type, name in fields] == list(port_maps.PortState._fields)[1:]
    sizes = {"__u64": "Q", "__u32": "I"}
    assert port_maps.STATE.format == "=I" + "".join(sizes[t] for t, _name in fields)


def test_port_cfg_keeps_the_old_tuple_indexing():
    cfg = port_maps.PortCfg(1, 2, 3, 4, 5, 6, 7, 8, 9)
    assert (cfg[4], cfg[5], cfg[8]) == (cfg.drop_prob, cfg.flags, cfg.name_tag)
    assert port_maps.CFG.unpack(port_maps.CFG.pack(*cfg)) == tuple(cfg)


def test_the_fabric_tables_use_the_wire_ports():
    assert (tables.MRC_PORT, tables.BASELINE_PORT, tables.EV_PORT_BASE) == \
        (wire.MRC_PORT, wire.BASELINE_PORT, wire.EV_PORT_BASE)


def test_wire_stays_free_of_lab_and_topologies():
    source = Path(wire.__file__).read_text()
    assert not re.search(r"^\s*(from|import)\s+(lab|topologies|faults)\b", source, re.M)
