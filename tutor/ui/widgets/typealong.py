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
    """The passage, one Strip per target line, with a line-number gutter that does not scroll
    sideways. Focus stays on the enclosing TypeAlong, which handles the keys."""

    COMPONENT_CLASSES = {f"typing-area--{s}" for s in STATUSES} | {"typing-area--gutter", "typing-area--gutter-caret"}

    DEFAULT_CSS = """
    TypingArea { background: $surface; }
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
        self._cache: LRUCache[int, Strip] = LRUCache(1024)  # row -> uncropped code strip
        self._styles: dict[str, Style] | None = None
        self._gutter = len(str(session.line_count)) + 2  # "123 " plus a space of air
        # +1 column so the caret can sit after the longest line (extras widen it: `grow`).
        self.virtual_size = Size(self._gutter + session.max_line_length + 1, session.line_count)

    def grow(self) -> None:
        """Widen the scroll area when extra characters push the caret past the longest line."""
        width = self._gutter + self.session.caret_screen_col + 1
        if width > self.virtual_size.width:
            self.virtual_size = Size(width, self.virtual_size.height)

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

    def _code_strip(self, row: int) -> Strip:
        strip = self._cache.get(row)
        if strip is None:
            styles = self._status_styles()
            segments = [Segment(text, styles[status]) for text, status in self.session.line_segments(row)]
            strip = Strip(segments)
            self._cache[row] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if row >= self.session.line_count:
            return Strip.blank(width, base)
        styles = self._status_styles()
        on_caret = row == self.session.caret_row and not self.session.finished
        number = f"{row + 1:>{self._gutter - 2}}  "
        gutter = Strip([Segment(number, styles["gutter-caret" if on_caret else "gutter"])])
        code_width = max(0, width - self._gutter)
        code = self._code_strip(row).crop_extend(scroll_x, scroll_x + code_width, base)
        return Strip.join([gutter, code]).crop(0, width)

    # -- updates ---------------------------------------------------------------------------

    def refresh_rows(self, first: int, last: int) -> None:
        """Forget and repaint rows first..last (inclusive)."""
        for row in range(first, last + 1):
            self._cache.discard(row)
        self.refresh_lines(first, last - first + 1)

    def reset(self) -> None:
        self._cache.clear()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def follow_caret(self) -> None:
        """Keep the caret a few rows/columns away from the edges.

        Vertically it jumps by about half a screen rather than a line: a scroll repaints the
        whole view, so it should happen every dozen lines, not at every Enter."""
        height = self.scrollable_content_region.height
        code_width = self.scrollable_content_region.width - self._gutter
        if height <= 0 or code_width <= 0:
            return
        row, col = self.session.caret_row, self.session.caret_screen_col
        x, y = self.scroll_offset
        margin_y = min(3, (height - 1) // 2)
        if row < y + margin_y:
            y = row - max(margin_y, (height * 2) // 3)
        elif row > y + height - 1 - margin_y:
            y = row - max(margin_y, height // 3)
        margin_x = min(8, (code_width - 1) // 2)
        if col < x + margin_x:
            x = col - margin_x
        elif col > x + code_width - 1 - margin_x:
            x = col - code_width + 1 + margin_x
        x, y = max(0, x), max(0, y)
        if (x, y) != tuple(self.scroll_offset):
            self.scroll_to(x, y, animate=False, immediate=True)


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
        self._area.grow()
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
