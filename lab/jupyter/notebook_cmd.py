"""`lab/run.py notebook`: JupyterLab on the notebooks/ folder with the project's kernel.

Works as root on a machine without a desktop: no browser is opened, root is
allowed, the server listens on 127.0.0.1 only (reach it through an SSH
tunnel: ssh -L PORT:127.0.0.1:PORT host), and the URL with its token is
printed as soon as the server is up.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
from typing import Callable, Optional

from topologies.project import PROJECT_ROOT
from topologies.system.waiting import wait_until

NOTEBOOKS = PROJECT_ROOT / "notebooks"
KERNEL_NAME = "mrclab"   # the name the notebooks' metadata asks for
KERNEL_DISPLAY = "MRC lab (.venv)"


def ensure_kernel(python: str = sys.executable) -> str:
    """Register the ipykernel of ``python`` (the .venv) as KERNEL_NAME inside its own prefix.

    --sys-prefix puts the kernelspec in <venv>/share/jupyter/kernels, where the
    venv's Jupyter (and nbclient) look first; re-registering is harmless.
    """
    subprocess.run([python, "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL_NAME,
                    "--display-name", KERNEL_DISPLAY], check=True, capture_output=True, text=True)
    return KERNEL_NAME


def jupyter_command(port: int, ip: str, token: str) -> list[str]:
    return [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip", ip,
            "--port", str(port), "--port-retries", "0", "--notebook-dir", str(NOTEBOOKS),
            f"--IdentityProvider.token={token}"]


def wait_until_listening(ip: str, port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until (ip, port) accepts a connection, the server exits or `timeout` s pass."""
    def listening_or_exited() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex((ip, port)) == 0 or proc.poll() is not None

    wait_until(listening_or_exited, timeout, interval=0.1)


def open_jupyter(port: int = 8888, ip: str = "127.0.0.1", on_url: Optional[Callable[[str], None]] = None) -> int:
    """Start JupyterLab, print its URL (with token), serve until Ctrl-C; returns its exit code.
    ``on_url(url)`` is called once the server listens (the CLI writes it to --json)."""
    ensure_kernel()
    token = secrets.token_hex(24)
    env = dict(os.environ)
    # the notebooks import lab/, topologies/... from the project root
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.Popen(jupyter_command(port, ip, token), cwd=NOTEBOOKS, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    url = f"http://{ip}:{port}/lab?token={token}"
    printed = False
    try:
        for line in proc.stdout:
            # Jupyter logs on stderr; pass errors through, announce the URL once it listens
            if not printed and re.search(r"(Jupyter Server|http://).*(running|127\.0\.0\.1|localhost)", line):
                # Jupyter logs "running at" a moment before its socket accepts connections
                wait_until_listening(ip, port, proc)
                if on_url is not None:
                    on_url(url)   # before the URL is shown: whoever sees it finds the file
                print(f"JupyterLab with the '{KERNEL_DISPLAY}' kernel on {NOTEBOOKS}\n"
                      f"open: {url}\n(on a remote machine: ssh -L {port}:127.0.0.1:{port} <host>; "
                      "Ctrl-C stops the server)", flush=True)
                printed = True
            elif re.search(r"\b(ERROR|Traceback|error)\b", line):
                print(line, end="", file=sys.stderr, flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            time.sleep(0.1)
