"""mrc_host.path_select.load_policy: a policy by name or from "file.py:ClassName" (exercise 01)."""

import pytest

from mrc_host.path_select import load_policy
from mrc_host.connection import MrcConnection
from mrc_host.path_select import PathSelector, RoundRobin

POLICY = '''
from mrc_host.path_select import RoundRobin

class Last(RoundRobin):
    """Always the last usable path (a policy no built-in matches)."""
    def select(self, avoid=-1):
        for pid in reversed(range(len(self.paths))):
            if self.health.state[pid] == 0 and pid != avoid:
                return pid
        return None

NotAPolicy = object
'''


def test_names_pass_through():
    assert load_policy("round_robin") == "round_robin"


def test_class_from_file_drives_a_connection(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(POLICY)
    cls = load_policy(f"{path}:Last")
    assert issubclass(cls, PathSelector) and cls is not RoundRobin
    conn = MrcConnection(1, [(ev, 0) for ev in range(4)], policy=cls)
    assert conn.selector.select() == 3


@pytest.mark.parametrize("name", ["NotAPolicy", "Missing"])
def test_a_name_that_is_no_policy_class_is_refused(tmp_path, name):
    path = tmp_path / "mine.py"
    path.write_text(POLICY)
    with pytest.raises(ValueError, match=name):
        load_policy(f"{path}:{name}")


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises((ValueError, FileNotFoundError)):
        load_policy(f"{tmp_path / 'absent.py'}:Last")
