"""Type-along: the learner types a code passage over its dim "ghost" text, character by character.

`TypeAlong` owns a `TypingSession` (tutor/typing_engine.py) and draws it with the Line API:
each target line is one cached `Strip`, and a keystroke invalidates and repaints only the lines
between the old and the new caret, so the work per key is O(line), not O(passage).

Colours come from component classes (themeable); every status also differs by attribute
(dim / plain / bold+underline / strike / reverse / italic) so the text stays readable under
NO_COLOR. A one-line note above the passage says what the engine fills in; it and the figures
pick the longest wording that fits the pane, so nothing is cut at 80 columns.
"""

from __future__ import annotations

import bisect
import time
from typing import Callable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from tutor.i18n import N_, _
from tutor.progress import Progress, ProgressError, TypingRecord
from tutor.stats import history_lines
from tutor.ui.codewrap import break_points, hang_for
from tutor.typing_engine import (
    AUTO,
    CARET,
    CORRECT,
    EXTRA,
    HINT,
    INCORRECT,
    MISSED,
    PENDING,
    TypingSession,
    TypingStats,
    format_accuracy,
)

STATUSES = (PENDING, CORRECT, INCORRECT, AUTO, HINT, MISSED, EXTRA, CARET)
TICK = 0.25  # seconds between live stats refreshes while typing (elapsed time moves on its own)

# What the engine does for the learner, longest first; the note shows the longest that fits.
# Message ids: `fit` translates them, so a language switch redraws them.
NOTES = (
    N_("Indentation and blank lines are filled in for you · Tab types the next word · Ctrl+T restarts"),
    N_("Indentation and blank lines are filled in for you · Tab types the next word"),
    N_("Indentation and blank lines are filled in · Tab types the next word"),
    N_("Indents and blank lines are filled in · Tab: next word"),
    N_("Indents & blank lines filled in · Tab: next word"),
    N_("Indents & blank lines filled · Tab: next word"),
    N_("Indents filled in · Tab: next word"),
    N_("Tab: next word"),
)
AT_END = (N_("The last key was a mistake: Backspace fixes it, Enter finishes"), N_("Backspace fixes, Enter finishes"))


def _clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def fit(variants: tuple[str, ...] | list[str], width: int | None) -> str:
    """The first (longest) variant that fits `width` cells, translated; the last one when
    none does. Cells, not characters: a Chinese character takes two."""
    texts = [_(v) for v in variants]
    if width is not None:
        for text in texts:
            if cell_len(text) <= width:
                return text
    return texts[0] if width is None else texts[-1]


def stats_text(stats: TypingStats, width: int | None = None) -> str:
    """The figures, in the longest wording that fits (see tutor/typing_engine.py for the
    definitions; they are also in the F1 help)."""
    wpm, raw, acc = f"{stats.wpm:.0f}", f"{stats.raw_wpm:.0f}", format_accuracy(stats.accuracy)
    e, u, h, t = stats.errors, stats.uncorrected_errors, stats.hints, _clock_text(stats.elapsed)
    values = dict(wpm=wpm, raw=raw, acc=acc, e=e, u=u, h=h, t=t)
    return fit(
        [
            _(v, **values)
            for v in (
                N_("{wpm} WPM · raw {raw} · accuracy {acc} · errors {e} ({u} uncorrected) · hints {h} · {t}"),
                N_("{wpm} WPM · raw {raw} · accuracy {acc} · errors {e} ({u} left) · hints {h} · {t}"),
                N_("{wpm} WPM · accuracy {acc} · errors {e} ({u} left) · {t}"),
                N_("{wpm} WPM · {acc} · errors {e} ({u} left) · {t}"),
                N_("{wpm} WPM · {acc} · {e} err · {t}"),
            )
        ],
        width,
    )


class TypingArea(ScrollView, can_focus=False):
    """The passage, one cached Strip per target line, wrapped to the pane: a line longer than
    the pane goes on over more screen rows (broken between tokens, tutor/ui/codewrap.py,
    indented under its code), so the text still to type is always in sight, at 80 columns too. The
    line-number gutter names each line's first row; its continuation rows show ↪. Focus
    stays on the enclosing TypeAlong, which handles the keys."""

    COMPONENT_CLASSES = {f"typing-area--{s}" for s in STATUSES} | {"typing-area--gutter", "typing-area--gutter-caret"}

    DEFAULT_CSS = """
    TypingArea { background: $surface; overflow-x: hidden; scrollbar-gutter: stable; }
    TypingArea > .typing-area--pending { color: $foreground; text-style: dim; }
    TypingArea > .typing-area--correct { color: $text-success; }
    TypingArea > .typing-area--auto { color: $text-success; }
    TypingArea > .typing-area--incorrect {
        color: $text; background: $error; text-style: bold underline;
    }
    TypingArea > .typing-area--hint { color: $text-warning; text-style: italic; }
    TypingArea > .typing-area--missed { color: $text-error; text-style: strike dim; }
    TypingArea > .typing-area--extra {
        color: $text; background: $error; text-style: bold italic underline;
    }
    TypingArea > .typing-area--caret { text-style: reverse bold; }
    TypingArea > .typing-area--gutter { color: $foreground; text-style: dim; }
    TypingArea > .typing-area--gutter-caret { color: $foreground; text-style: bold; }
    """

    def __init__(self, session: TypingSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        # row -> (code strip, cell offsets where its screen rows start)
        self._cache: LRUCache[int, tuple[Strip, list[int]]] = LRUCache(1024)
        self._styles: dict[str, Style] | None = None
        self._gutter = len(str(session.line_count)) + 2  # "123 " plus a space of air
        self._width = 0  # the code width the rows were wrapped to
        self._first: list[int] = list(range(session.line_count + 1))  # row -> its first screen row
        self.virtual_size = Size(0, session.line_count)

    # -- wrapping --------------------------------------------------------------------------

    @property
    def code_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self._gutter)

    def _hang(self, row: int) -> int:
        """How far continuation rows are indented (under the line's code)."""
        return hang_for(self.session.lines[row], self.code_width)

    def _row(self, row: int) -> tuple[Strip, list[int]]:
        got = self._cache.get(row)
        if got is None:
            styles = self._status_styles()
            runs = self.session.line_segments(row)
            text = "".join(t for t, _ in runs)
            if not runs or runs[-1][1] != CARET:
                text += " "  # room for the caret at the line's end, so rows do not jump
            breaks = break_points(text, self.code_width, self._hang(row))
            cells = [cell_len(text[:b]) for b in breaks]
            got = (Strip([Segment(t, styles[status]) for t, status in runs]), cells)
            self._cache[row] = got
        return got

    def relayout(self) -> None:
        """Wrap every line to the current width (on resize; a passage is a few dozen lines)."""
        self._width = self.code_width
        self._cache.clear()
        self._restack()
        self.refresh()

    def _restack(self) -> bool:
        """Recount each line's screen rows; True when any moved."""
        first = [0]
        for row in range(self.session.line_count):
            first.append(first[-1] + len(self._row(row)[1]))
        moved = first != self._first
        self._first = first
        height = first[-1]
        if self.virtual_size.height != height:
            self.virtual_size = Size(0, height)
        return moved

    def on_resize(self, event: events.Resize) -> None:
        if self.code_width != self._width:
            self.relayout()
            self.follow_caret()

    def screen_row_of(self, row: int, cell: int = 0) -> int:
        """The screen row (from the top of the passage) showing cell `cell` of line `row`."""
        starts = self._row(row)[1]
        return self._first[row] + max(0, bisect.bisect_right(starts, cell) - 1)

    def caret_cell(self) -> int:
        """The caret's cell offset in its line (extras and wide characters counted)."""
        cell = 0
        for text, status in self.session.line_segments(self.session.caret_row):
            if status == CARET:
                break
            cell += cell_len(text)
        return cell

    # -- rendering -------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._cache.clear()

    def _status_styles(self) -> dict[str, Style]:
        if self._styles is None:
            styles = {s: self.get_component_rich_style(f"typing-area--{s}") for s in STATUSES}
            styles["gutter"] = self.get_component_rich_style("typing-area--gutter")
            styles["gutter-caret"] = self.get_component_rich_style("typing-area--gutter-caret")
            self._styles = styles
        return self._styles

    def render_line(self, y: int) -> Strip:
        if self._width != self.code_width:  # first paint, before any resize event
            self._width = self.code_width
            self._cache.clear()
            self._restack()
        visual = self.scroll_offset.y + y
        width = self.size.width
        base = self.rich_style
        if visual >= self._first[-1]:
            return Strip.blank(width, base)
        row = bisect.bisect_right(self._first, visual) - 1
        part = visual - self._first[row]
        strip, starts = self._row(row)
        styles = self._status_styles()
        on_caret = row == self.session.caret_row and not self.session.finished
        style = styles["gutter-caret" if on_caret else "gutter"]
        label = f"{row + 1}" if part == 0 else "↪"
        gutter = Strip([Segment(f"{label:>{self._gutter - 2}}  ", style)])
        hang = self._hang(row) if part else 0
        end = starts[part + 1] if part + 1 < len(starts) else strip.cell_length + 1
        code = strip.crop(starts[part], end)
        pieces = [gutter]
        if hang:
            pieces.append(Strip.blank(hang, base))
        pieces.append(code)
        return Strip.join(pieces).extend_cell_length(width, base).crop(0, width)

    # -- updates ---------------------------------------------------------------------------

    def refresh_rows(self, first: int, last: int) -> None:
        """Forget and repaint lines first..last (inclusive), and every row below them when
        their number of screen rows changed."""
        for row in range(first, last + 1):
            self._cache.discard(row)
        if self._restack():
            self.refresh_lines(self._first[first], self._first[-1] - self._first[first])
        else:
            self.refresh_lines(self._first[first], self._first[last + 1] - self._first[first])

    def reset(self) -> None:
        self._cache.clear()
        self._restack()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def follow_caret(self) -> None:
        """Keep the caret a few rows away from the top and bottom edges.

        It jumps by about half a screen rather than a row: a scroll repaints the whole view,
        so it should happen every dozen lines, not at every Enter."""
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        row = self.screen_row_of(self.session.caret_row, self.caret_cell())
        y = self.scroll_offset.y
        margin = min(3, (height - 1) // 2)
        if row < y + margin:
            y = row - max(margin, (height * 2) // 3)
        elif row > y + height - 1 - margin:
            y = row - max(margin, height // 3)
        y = max(0, y)
        if y != self.scroll_offset.y:
            self.scroll_to(0, y, animate=False, immediate=True)


class TypeAlongNote(Widget):
    """One line above the passage: what is filled in for the learner and what Tab does."""

    DEFAULT_CSS = """
    TypeAlongNote { height: 1; padding: 0 1; color: $text-muted; text-style: italic; }
    """

    def render(self) -> Text:
        return Text(fit(NOTES, self.content_region.width or None))


class StatsLine(Widget):
    """One line of live figures; re-rendering it is O(1)."""

    DEFAULT_CSS = """
    StatsLine { height: 1; background: $panel; padding: 0 1; }
    """

    def __init__(self, session: TypingSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session

    def render(self) -> Text:
        width = self.content_region.width or None
        if self.session.at_end:
            return Text(fit(AT_END, width), style="bold")
        if not self.session.started:
            return Text(
                fit(
                    (
                        N_("Start typing: the clock starts at your first key"),
                        N_("The clock starts at your first key"),
                        N_("Start typing"),
                    ),
                    width,
                ),
                style="italic",
            )
        return Text(stats_text(self.session.stats(), width), style="bold" if self.session.finished else "")


class TypeAlong(Widget, can_focus=True):
    """Type a passage along: ghost text, live figures, a results view when done.

    Posts `TypeAlong.Finished` when the last character is typed and stores a `TypingRecord`.
    """

    BINDINGS = [
        Binding("tab", "hint", N_("Hint"), tooltip=N_("Insert the next word (counted as a hint)"), id="typealong-hint"),
        Binding(
            "ctrl+t",
            "restart",
            N_("Restart"),
            tooltip=N_("Type this passage again from the start"),
            id="typealong-restart",
        ),
    ]

    DEFAULT_CSS = """
    TypeAlong { height: 1fr; layout: vertical; }
    TypeAlong > TypingArea { height: 1fr; }
    TypeAlong > #typealong-results { height: auto; display: none; padding: 0 1;
                                     border-top: solid $primary; background: $panel; }
    TypeAlong.-finished > #typealong-results { display: block; }
    TypeAlong:focus > StatsLine { background: $primary-muted; }
    """

    class Finished(Message):
        """The learner typed the passage to the end."""

        def __init__(self, typealong: "TypeAlong", passage_key: str, record: TypingRecord) -> None:
            super().__init__()
            self.typealong = typealong
            self.passage_key = passage_key
            self.record = record

        @property
        def control(self) -> "TypeAlong":
            return self.typealong

    def __init__(
        self,
        passage_key: str,
        target: str,
        progress: Progress,
        *,
        clock: Callable[[], float] = time.monotonic,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.passage_key = passage_key
        self.progress = progress
        self.session = TypingSession(target, clock=clock)
        self.record: TypingRecord | None = None  # the stored result, once finished
        self._last_key = 0.0  # time.monotonic() of the last edit (real time, for repaints)

    @property
    def typed_text(self) -> str:
        """What the learner typed, newline-terminated, ready to be run."""
        return self.session.typed_text + "\n"

    def compose(self) -> ComposeResult:
        yield TypeAlongNote(id="typealong-note")
        yield StatsLine(self.session, id="typealong-stats")
        yield TypingArea(self.session, id="typealong-area")
        with Vertical(id="typealong-results"):
            yield Static(id="typealong-summary")
            yield Static(id="typealong-history")

    def on_mount(self) -> None:
        if not self.query(TypingArea):  # removed before its children mounted (Ctrl+N held down)
            return
        self._area = self.query_one(TypingArea)
        self._stats = self.query_one(StatsLine)
        self.set_interval(TICK, self._tick)

    def _tick(self) -> None:
        # Only while idle: a key refreshes the figures anyway, and an extra repaint just
        # before a key would make that key wait for the next frame slot.
        idle = time.monotonic() - self._last_key >= TICK
        if idle and self.session.started and not self.session.finished:
            self._stats.refresh()

    # -- input -----------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        if self.session.finished:
            return  # let the app have its keys (run, next step...)
        if event.key == "enter":
            self._apply(self.session.enter)
        elif event.key == "backspace":
            self._apply(self.session.backspace)
        elif event.is_printable and event.character and event.key != "tab":
            character = event.character
            self._apply(lambda: self.session.type_char(character))
        else:
            return
        # Typing is not a shortcut: keep letters away from the app's bindings.
        event.stop()
        event.prevent_default()

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        if not self.session.finished:
            self.notify(_("Pasting is off in type-along: the point is to type it."), severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "hint" and self.session.finished:
            return False  # lets Tab move focus again
        return True

    def action_hint(self) -> None:
        self._apply(self.session.hint)

    def action_restart(self) -> None:
        self.session.reset()
        self.record = None
        self.remove_class("-finished")
        self._area.reset()
        self._area.follow_caret()
        self._stats.refresh()
        self.refresh_bindings()

    def _apply(self, edit: Callable[[], None]) -> None:
        """Run one edit, then repaint only the rows it touched."""
        session = self.session
        if session.finished:
            return  # finishing is reported and stored once
        self._last_key = time.monotonic()
        before, revision = session.caret, session.revision
        edit()
        if session.revision == revision:
            return  # absorbed (a blank-line Enter, typed indentation): nothing to repaint
        after = session.caret
        first = session.row_of(min(before, after))
        last = session.row_of(max(before, after))
        self._area.refresh_rows(first, last)
        self._area.follow_caret()
        self._stats.refresh()
        if session.finished:
            self._finish()

    # -- results ---------------------------------------------------------------------------

    def _finish(self) -> None:
        stats = self.session.stats()
        record = TypingRecord(
            passage=self.passage_key,
            at=time.time(),
            wpm=stats.wpm,
            raw_wpm=stats.raw_wpm,
            accuracy=stats.accuracy,
            errors=stats.errors,
            hints=stats.hints,
            seconds=stats.elapsed,
        )
        self.record = record
        history: list[TypingRecord] = []
        try:
            self.progress.record_typing(record)
            history = self.progress.typing_history(self.passage_key)
        except ProgressError as exc:
            self.notify(_("Your typing result was not saved: {error}", error=exc), severity="error", timeout=8)
        if not history or history[-1] != record:
            history.append(record)
        self._show_results(stats, history)
        self.refresh_bindings()
        self.post_message(self.Finished(self, self.passage_key, record))

    def _show_results(self, stats: TypingStats, history: list[TypingRecord]) -> None:
        best = max(history, key=lambda r: r.wpm)
        text = Text()
        text.append(_("Done!") + " ", style="bold")
        text.append(stats_text(stats))
        left = []
        if stats.uncorrected_errors:
            n = stats.uncorrected_errors
            left.append(
                _("1 mistake left in the code you typed")
                if n == 1
                else _("{n} mistakes left in the code you typed", n=n)
            )
        if stats.missed:
            n = stats.missed
            left.append(_("1 character skipped") if n == 1 else _("{n} characters skipped", n=n))
        if left:
            text.append("\n" + _("; ").join(left) + _("."), style="bold")
        n = len(history)
        attempts = _("1 attempt") if n == 1 else _("{n} attempts", n=n)
        if best is history[-1] and len(history) > 1:
            text.append("\n" + _("A new best for this passage! ({attempts})", attempts=attempts), style="bold")
        elif len(history) > 1:
            text.append(
                "\n"
                + _(
                    "Best for this passage: {wpm} WPM at {acc} accuracy · {attempts}",
                    wpm=f"{best.wpm:.0f}",
                    acc=format_accuracy(best.accuracy),
                    attempts=attempts,
                )
            )
        self.query_one("#typealong-summary", Static).update(text)
        self.query_one("#typealong-history", Static).update(Text("\n".join(history_lines(history)), style="dim"))
        self.add_class("-finished")
