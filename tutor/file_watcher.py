"""Watch one file for saves (watchfiles, in a thread). Plain Python, no Textual.

The whole workspace folder is watched and events are filtered to the current target, so moving
to another exercise only changes `target`; nothing restarts. Editors save in many ways (write
in place, write a temp file and rename it over, delete and recreate): all of them end with an
event on the target's path. A burst of events is debounced into one call of `on_change`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

import watchfiles

# Quiet time that ends a burst of events, and the longest a burst is collected before it is
# reported anyway (ms): one save is one check, even from an editor that writes three times.
QUIET_MS = 150
MAX_BURST_MS = 1200


class FileWatcher:
    def __init__(
        self,
        root: Path,
        on_change: Callable[[Path], None],
        on_error: Callable[[str], None] | None = None,
        *,
        force_polling: bool | None = None,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.on_change = on_change
        self.on_error = on_error
        self.force_polling = force_polling
        self._target: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def target(self) -> Path | None:
        return Path(self._target) if self._target else None

    @target.setter
    def target(self, path: Path | None) -> None:
        self._target = os.path.realpath(path) if path is not None else None

    def start(self) -> None:
        if self._thread is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._thread = threading.Thread(target=self._run, name="tutor-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=3)
            self._thread = None

    def _is_target(self, _change: watchfiles.Change, path: str) -> bool:
        return self._target is not None and os.path.realpath(path) == self._target

    def _run(self) -> None:
        polling = self.force_polling
        while not self._stop.is_set():
            try:
                for changes in watchfiles.watch(
                    self.root,
                    watch_filter=self._is_target,
                    step=QUIET_MS,
                    debounce=MAX_BURST_MS,
                    stop_event=self._stop,
                    raise_interrupt=False,
                    force_polling=polling,
                    ignore_permission_denied=True,
                ):
                    target = self._target
                    if target and any(os.path.realpath(p) == target for _, p in changes):
                        self.on_change(Path(target))
                return
            except Exception as exc:  # e.g. the inotify watch limit: fall back to polling once
                if polling:
                    if self.on_error:
                        self.on_error(f"cannot watch {self.root} for saves: {exc}")
                    return
                polling = True
