"""Wake when a file is replaced, instead of polling it: inotify on its directory.

A writer replaces the file atomically (a temporary file renamed over it), so
the watch asks for IN_MOVED_TO (and IN_CLOSE_WRITE for one written in place,
IN_DELETE for one removed) and keeps the events that name the file. Its
fileno() goes into the caller's selector; `changed()` drains the events.
Without inotify (no more watches, an odd filesystem) `open_watch` returns
None and the caller polls as before.
"""

from __future__ import annotations

import os
from pathlib import Path

from inotify_simple import INotify, flags

_EVENTS = flags.MOVED_TO | flags.CLOSE_WRITE | flags.DELETE


class FileWatch:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._inotify = INotify(nonblocking=True)
        try:
            self._inotify.add_watch(self.path.parent, _EVENTS)
        except OSError:
            self._inotify.close()
            raise

    def fileno(self) -> int:
        return self._inotify.fileno()

    def changed(self) -> bool:
        """Drain the pending events: True if one named the file."""
        name = self.path.name
        try:
            return any(event.name == name for event in self._inotify.read(timeout=0))
        except BlockingIOError:
            return False

    def close(self) -> None:
        self._inotify.close()


def open_watch(path: str | os.PathLike) -> FileWatch | None:
    """A FileWatch on `path`, or None where inotify cannot watch its directory."""
    try:
        return FileWatch(path)
    except OSError:
        return None
