"""Write a file so that a reader only ever sees the old file or the new one.

A crash, a ``kill -9`` or a full disk in the middle of ``Path.write_text``
leaves a half-written file that every later reader chokes on. Here the text
goes to a temporary file in the same directory, is flushed to disk (fsync),
and only then renamed over the target (``os.replace`` is atomic within one
filesystem). A write that fails removes its temporary file; a process killed
mid-write leaves at most a stray ``.<name>.<random>.tmp`` next to an intact
target.

Standard library only, so every layer of the lab may import it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8, newlines as given) all at once; returns ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # 0o666 and the umask, as open() would: the results stay readable by other users
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)
    return path


def write_json_atomic(path: str | Path, data, *, indent: int | None = 2, sort_keys: bool = False,
                      default=None) -> Path:
    """``data`` as JSON (with a final newline) at ``path``, written with write_text_atomic.

    The JSON is built in full before the file is touched, so data that cannot
    be serialised leaves the old file alone too.
    """
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, default=default) + "\n"
    return write_text_atomic(path, text)


def _write_all(fd: int, data: bytes) -> None:
    # os.write may write less than asked (signals, pipes, nearly full disks)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; some filesystems cannot fsync a directory, which is fine."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
