"""Second servers of tests/cluster_harness.py are found and removed by their names whatever an
earlier run left: a run killed with SIGKILL after setup, or a half-made server.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cluster_harness import PREFIX, STATE_ROOT, SecondServer, leftovers, leftovers_of, missing, teardown_all

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
ROOT = Path(__file__).resolve().parents[2]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


@pytest.fixture
def clean_machine():
    if leftovers():
        pytest.fail(f"second servers left by an earlier run: {leftovers()} (tests/cluster_harness.py teardown_all)")
    try:
        yield
    finally:
        teardown_all()


def test_setup_and_teardown_after_a_sigkilled_run(clean_machine):
    """A run killed with SIGKILL after setup leaves server C running (and what it started); the next setup and
    teardown_all remove it by its names."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.cluster_harness import SecondServer
        server = SecondServer("C", index=2).setup()
        # started on server C in a network namespace of its own, as a Mininet node's shell is
        server.ssh("setsid unshare --net sleep 600 </dev/null >/dev/null 2>&1 &")
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = leftovers_of("C")
    assert left["processes"] and left["namespaces"] and left["links"] and left["state"]
    assert any(cmdline(pid) == "sleep 600" for pid in left["processes"])
    # a new run sets it up again over what was left, and ssh reaches the new one
    server = SecondServer("C", index=2).setup()
    assert server.ssh(["hostname"]).strip() == "srvC"
    # a half-made server: a namespace and a state directory, nothing else
    subprocess.run(["ip", "netns", "add", f"{PREFIX}D"], check=True)
    (STATE_ROOT / "D").mkdir()
    assert sorted(teardown_all()) == ["C", "D"]
    assert leftovers() == {} and not STATE_ROOT.exists()
