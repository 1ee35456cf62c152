"""The fabric-size calculator and its CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topologies.sizing import SizingError, clos_hosts, clos_switches, fabric_size

RUN = Path(__file__).resolve().parents[2] / "lab" / "run.py"


def test_the_mrc_paper_figure():
    size = fabric_size(512, 8)
    assert size.nics == 131_072 and size.tiers == 2
    assert (size.t0_per_plane, size.t1_per_plane) == (512, 256)
    assert size.switches == 8 * (512 + 256)
    # the same switch as 64 x 800G: 2 tiers reach 2048 NICs, 3 tiers 65,536
    assert size.single_plane_radix == 64
    assert size.single_plane_nics_2_tiers == 2048
    assert size.single_plane_nics_3_tiers == 65_536
    assert size.single_plane_tiers == 4


def test_clos_formulas():
    assert clos_hosts(4, 2) == 8 and clos_hosts(4, 3) == 16
    assert clos_switches(4, 2, 8) == 6  # 4 leaves + 2 spines
    assert clos_switches(64, 3, 65_536) == 5 * 65_536 // 64


@pytest.mark.parametrize("radix, planes", [(511, 1), (512, 3), (8, 8), (0, 1)])
def test_bad_sizes_are_refused(radix, planes):
    with pytest.raises(SizingError):
        fabric_size(radix, planes)


def test_cli_writes_json(tmp_path):
    out = tmp_path / "f.json"
    proc = subprocess.run([sys.executable, str(RUN), "fabric-size", "--radix", "512", "--planes", "8",
                           "--json", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["nics"] == 131_072 and data["tiers"] == 2 and data["switches"] == 6144


def test_cli_bad_argument_is_one_clear_line():
    proc = subprocess.run([sys.executable, str(RUN), "fabric-size", "--radix", "7"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "radix must be an even number" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
