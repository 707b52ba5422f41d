"""The main screen's layout, by step kind: reading steps give the guide the whole width;
exercises and passages put the guide beside the work. F4 zooms either pane to the full width,
Alt+Shift+←/→ moves the split, F2 shows or hides the navigator; the choices persist (Prefs)."""

from __future__ import annotations

from typing import Callable

from textual.screen import Screen

from tutor.ui.prefs import Prefs
from tutor.ui.widgets.navigator import StepNavigator

GUIDE_MIN, WORK_MIN = 24, 40  # the panes' min-width in tutor.tcss
ZOOMS = ("split", "guide", "work")
SPLIT_MIN, SPLIT_MAX, SPLIT_STEP = 20, 70, 5
# The guide's share of the width, per step kind: a type-along passage needs its code's full
# line length more than the guide (which shows the same code).
SPLIT_DEFAULT = {"exercise": 40, "passage": 30}


class SplitLayout:
    """Step kind, zoom, split and navigator choice -> the screen's classes and the guide's width."""

    def __init__(
        self,
        screen: Screen[None],
        prefs: Prefs,
        kind: Callable[[], str],
        resumed: Callable[[], bool],
        fit: Callable[[], None],
    ) -> None:
        self.screen = screen
        self.prefs = prefs
        self._kind = kind
        self._resumed = resumed
        self._fit = fit
        self._applied: tuple[object, ...] = ()  # what apply() last applied

    def zoom(self) -> str:
        return self.prefs.get("zoom", "split") if self._kind() != "read" else "split"

    def _split(self, kind: str, clamp: bool = True) -> int:
        try:
            split = int(self.prefs.get(f"split.{kind}", str(SPLIT_DEFAULT.get(kind, 40))))
        except ValueError:
            split = SPLIT_DEFAULT.get(kind, 40)
        return max(SPLIT_MIN, min(SPLIT_MAX, split)) if clamp else split

    def apply(self) -> None:
        screen, kind = self.screen, self._kind()
        zoom = self.zoom()
        nav = self.prefs.get(f"nav.{'read' if kind == 'read' else 'work'}", "1" if kind == "read" else "0")
        # One style update for all of them (each set_class would restyle the whole screen).
        want = {
            "-read": kind == "read",
            "-exercise": kind == "exercise",
            "-passage": kind == "passage",
            "-zoom-guide": zoom == "guide",
            "-zoom-work": zoom == "work",
            "-nav": nav == "1",
        }
        if any(screen.has_class(name) != on for name, on in want.items()):
            for name, on in want.items():
                screen.set_class(on, name, update=False)
            if self._resumed():  # before the first resume, Textual's own styling pass covers it
                screen.update_node_styles()
        split = self._split(kind)
        layout = (kind, zoom, nav, split, screen.has_class("-tiny"), screen.size)
        if layout == self._applied:
            return
        self._applied = layout
        guide = screen.query_one("#guide-pane")
        full = kind == "read" or zoom == "guide" or screen.has_class("-tiny")
        width = "1fr" if full else f"{split}%"
        cramped = False
        if not full and nav == "1" and zoom == "split":
            width, cramped = self._guide_beside_navigator(split)
        screen.set_class(cramped, "-nav-over-guide")
        if str(guide.styles.width) != width:
            guide.styles.width = width
        self._fit()

    def _guide_beside_navigator(self, split: int) -> tuple[str, bool]:
        """The guide's width when the navigator (F2) stands beside guide and work: `split`
        percent of what the navigator leaves, so the three fit the screen. Where the work would
        get under its minimum even with the narrowest guide (80 columns), the navigator takes
        the guide's place until F2 hides it again (True): the editor keeps its right edge."""
        nav = self.screen.query_one(StepNavigator).styles.width
        nav_cells = nav.cells if nav is not None and nav.cells is not None else 32
        rest = self.screen.size.width - nav_cells
        guide = max(GUIDE_MIN, rest * split // 100)
        if rest - guide < WORK_MIN:
            guide = rest - WORK_MIN
        if guide < GUIDE_MIN:
            return f"{split}%", True
        return str(guide), False

    def next_zoom(self) -> str:
        """F4: split -> guide -> work -> split; the new zoom."""
        zoom = self.prefs.get("zoom", "split")
        nxt = ZOOMS[(ZOOMS.index(zoom) + 1) % len(ZOOMS)] if zoom in ZOOMS else "split"
        self.prefs.set("zoom", nxt)
        self.apply()
        return nxt

    def unzoom(self) -> None:
        self.prefs.set("zoom", "split")
        self.apply()

    def move_split(self, direction: int) -> None:
        kind = self._kind()
        self.prefs.set(
            f"split.{kind}",
            str(max(SPLIT_MIN, min(SPLIT_MAX, self._split(kind, clamp=False) + direction * SPLIT_STEP))),
        )
        if self.prefs.get("zoom", "split") != "split":
            self.prefs.set("zoom", "split")
        self.apply()

    def toggle_navigator(self) -> bool:
        """F2: show or hide the navigator; whether it is shown now."""
        shown = self.screen.has_class("-nav")
        self.prefs.set(f"nav.{'read' if self._kind() == 'read' else 'work'}", "0" if shown else "1")
        self.apply()
        return not shown
