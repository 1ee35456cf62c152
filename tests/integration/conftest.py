import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="integration test: needs root (run the README's test command with sudo)")
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture
def no_leftovers():
    """The test starts and must end with no trace of the lab on the machine."""
    from lab.plumbing import cleanup
    from lab.plumbing.lock import delegate_to_children, lab_lock

    # no other lab run may add or remove state meanwhile; sessions the test
    # starts in child processes share the lock
    with lab_lock(), delegate_to_children():
        cleanup.clean()
        yield
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, f"the lab left state behind: {left}"
