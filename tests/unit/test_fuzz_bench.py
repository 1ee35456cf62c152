"""bench/fuzz_parser.py runs as docs/machine.md lists it (default count) and finds nothing."""

import os
import re
import subprocess
import sys
from pathlib import Path

from mrc_host.simnet import parse_checks
from topologies.system.netns import private_loopback

ROOT = Path(__file__).resolve().parents[2]


def test_fuzz_parser_script_default_run_is_clean():
    venv_python = ROOT / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    command = [python, "bench/fuzz_parser.py"]
    # as root, away from any other agent on the wire's ports (a concurrent test or benchmark)
    r = subprocess.run(private_loopback(command) if os.geteuid() == 0 else command, cwd=ROOT,
                       capture_output=True, text=True,
                       timeout=600, env={**os.environ, "PYTHONPATH": ""})
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    count = int(re.search(r"^datagrams: (\d+) ", out, re.M).group(1))
    assert count >= 100_000
    assert re.search(r"\bescaped: 0\b", out) and "OK: nothing escaped" in out
    agents = dict(re.findall(r"^agent (\w+): garbage: \d+  internal errors: (\d+)$", out, re.M))
    assert agents == {"mrc": "0", "baseline": "0"}, out
    parsed, rejected = map(int, re.search(r"parsed ok: (\d+)  WireError: (\d+)", out).groups())
    assert parsed + rejected == count and parsed > 0 and rejected > 0
    distinct = int(re.search(r"^WireError reasons: (\d+) distinct$", out, re.M).group(1))
    assert distinct == len(parse_checks()), out    # the stream reaches every check of the parser
