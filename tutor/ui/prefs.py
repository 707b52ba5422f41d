"""The learner's layout choices (zoom, split, navigator, cursor per exercise): `ui.*` progress
state, read once and then from memory (layout runs on every resize)."""

from __future__ import annotations

from typing import Callable

from tutor.progress import Progress, ProgressError


class Prefs:
    def __init__(self, progress: Callable[[], Progress], error: Callable[[str], None]) -> None:
        self._progress = progress
        self._error = error
        self._cache: dict[str, str | None] = {}

    def get(self, key: str, default: str) -> str:
        if key not in self._cache:
            try:
                self._cache[key] = self._progress().get_state(f"ui.{key}")
            except Exception:  # a read error must not block the layout
                self._cache[key] = None
        return self._cache[key] or default

    def set(self, key: str, value: str) -> None:
        self._cache[key] = value
        try:
            self._progress().set_state(f"ui.{key}", value)
        except ProgressError as exc:
            self._error(str(exc))
