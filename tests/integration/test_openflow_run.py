"""The lab on the OpenFlow data plane (root): docs/dataplanes.md's `run clean --dataplane openflow`
(also on README.md) and `check --dataplane openflow`, typed as a user types them (from the project
root, with --json), as tests/integration/test_readme_commands.py runs the README's other lines."""

import json
from pathlib import Path

from tests.typed import run_typed, tail

RUN_OPENFLOW = "sudo python lab/run.py run clean --dataplane openflow"
CHECK_OPENFLOW = "sudo python lab/run.py check --dataplane openflow"
SHORT = ["--iterations", "3", "--buffer-mb", "0.5"]


def test_run_clean_on_openflow(tmp_path, no_leftovers):
    """Both transports verified byte for byte on Open vSwitch, nothing lost unexplained."""
    out = tmp_path / "run.json"
    done = run_typed(RUN_OPENFLOW, *SHORT, "--results", str(tmp_path), "--json", str(out), timeout=300)
    assert done.returncode == 0, tail(done)
    assert "openflow data plane: Open vSwitch switches" in done.stdout
    summary = json.loads(out.read_text())
    run_dir = Path(summary["results_dir"])
    assert json.loads((run_dir / "config.json").read_text())["fabric"]["dataplane"] == "openflow"
    for transport in ("mrc", "baseline"):
        assert summary[transport]["verified"] is True and summary[transport]["iterations"] == 3
        assert summary[transport]["unexplained_loss"] == 0


def test_check_on_openflow(tmp_path, no_leftovers):
    out = tmp_path / "check.json"
    done = run_typed(CHECK_OPENFLOW, "--json", str(out), timeout=300)
    assert done.returncode == 0, tail(done)
    figures = json.loads(out.read_text())
    assert figures["dataplane"] == "openflow"
    assert figures["paths_ok"] == figures["paths_total"] == 160 and figures["failures"] == []
    last = figures["conservation_attempts"][-1]
    assert figures["conservation_sent"] > 0 and last["sent"] == last["received"] == figures["conservation_received"]
    assert "paths verified: 160/160" in done.stdout
