"""Mininet's check of the lab's controller survives the controller's binary
OpenFlow HELLO (once: UnicodeDecodeError 0xf6 inside Mininet's telnet probe)."""

import os
import shutil
import socket
import threading

import pytest

from topologies.openflow.control import accepts_connections

# an OpenFlow 1.3 HELLO header with a byte that is never valid UTF-8
HELLO = b"\x04\x00\x00\x08\xf6\x00\x00\x00"


@pytest.fixture
def greeting_server():
    """A loopback port whose server sends HELLO to whoever connects, like the controller."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.sendall(HELLO)

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1]
    srv.close()


def test_a_greeting_controller_counts_as_listening(greeting_server):
    assert accepts_connections("127.0.0.1", greeting_server)


def test_a_closed_port_does_not():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connect is refused
        assert not accepts_connections("127.0.0.1", port)


@pytest.mark.skipif(shutil.which("mnexec") is None, reason="Mininet is not installed")
def test_the_lab_controller_never_decodes_the_hello(greeting_server, tmp_path, monkeypatch):
    """A telnet that prints what the real one does when the HELLO wins the race with
    its escape character: Mininet's own RemoteController check raises
    UnicodeDecodeError on it; the lab's must not run it."""
    pytest.importorskip("mininet")
    from topologies.openflow.builder import lab_controller

    telnet = tmp_path / "telnet"
    telnet.write_text("#!/bin/sh\nprintf 'Connected to 127.0.0.1.\\n\\004\\000\\000\\010\\366\\000\\000\\000\\n'\n")
    telnet.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    controller = lab_controller(greeting_server, name="unitctl")  # not c0: the lab's cleanup owns that name
    try:
        assert controller.isListening("127.0.0.1", greeting_server)
        assert controller.port == greeting_server
    finally:
        controller.terminate()
