"""The code editor: a TextArea with auto-indent, soft wrap, and Tab that helps a stuck learner.

Tab (documented in the help screen):
- on an empty or whitespace-only line (where a stuck learner's cursor sits) it asks for the
  next hint; when that hint's one-line code suggestion is showing there as dim ghost text, Tab
  inserts it (the only key that does: → just moves the cursor);
- with several lines selected, or with the cursor in a code line's leading whitespace, it
  indents; anywhere else in a line of code it asks for the next hint.
Shift+Tab removes one level of indentation; Enter keeps the indentation (one more after `:`).

Esc never moves focus out of the editor (vim users press it by reflex): it posts
`EscapePressed` and the screen closes its top panel.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

from tutor.i18n import N_, _


# scroll_y, the view's geometry and settings, the cursor's row, the selection's first and last
# rows (-1 when empty), the matched bracket.
_FrameState = tuple[int, tuple[object, ...], int, int, int, tuple[int, int] | None]


def _span_order(highlight: tuple[int, int | None, str]) -> tuple[int, int]:
    start, end, _name = highlight
    return start, -(end if end is not None else 1 << 30)


def leading_ws(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class CodeEditor(TextArea):
    # Tests set this to None so snapshots do not depend on tree-sitter being installed.
    LANGUAGE: ClassVar[str | None] = "python"

    BINDINGS = [
        Binding(
            "tab",
            "tab_key",
            N_("Hint"),
            id="hint",
            tooltip=N_(
                "Next hint on an empty line (or in a line of code); indents in leading "
                "whitespace or a selection; inserts a shown suggestion"
            ),
        ),
        Binding(
            "shift+tab", "dedent", N_("Dedent"), id="dedent", show=False, tooltip=N_("Remove one level of indentation")
        ),
        Binding(
            "ctrl+a",
            "select_all",
            N_("Select all"),
            id="select-all",
            show=False,
            tooltip=N_("Select all the text (Home goes to the line start)"),
        ),
        Binding("f3", "toggle_wrap", N_("Wrap"), id="wrap", show=False, tooltip=N_("Soft-wrap long lines on/off")),
    ]

    class HintRequested(Message):
        """Tab on an empty line or in code: the screen reveals the next hint."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row  # where the learner is stuck: the hint's ghost text shows there

    class EscapePressed(Message):
        """Esc in the editor: the screen closes its top panel; focus stays here."""

    ghost = ""  # the latest hint's code suggestion
    ghost_row: int | None = None  # the empty line where it applies (where Tab asked for it)

    def set_ghost(self, code: str | None, row: int | None) -> None:
        lines = self.text.split("\n")
        fits = row is not None and row < len(lines) and inside_a_block(lines, row)
        self.ghost = code if code and "\n" not in code and fits else ""
        self.ghost_row = row if self.ghost else None
        self.update_suggestion()

    def update_suggestion(self) -> None:
        """TextArea's hook after edits; we also call it when the cursor moves. The ghost shows
        only on its own empty line, with the cursor at its end and nothing selected."""
        row, col = self.cursor_location
        line = self.document[row] if row < self.document.line_count else ""
        show = (
            bool(self.ghost)
            and row == self.ghost_row
            and not line.strip()
            and col == len(line)
            and self.selection.is_empty
        )
        self.suggestion = self.ghost if show else ""

    def watch_selection(self) -> None:
        self.update_suggestion()
        if not self.soft_wrap:
            self.call_after_refresh(self._unscroll_sideways)

    def on_resize(self, event: events.Resize) -> None:
        """A panel opened, grew or closed beside the editor: the cursor's line stays in view
        (the screen's own call comes before the new size is laid out)."""
        if self.is_mounted:
            self.call_after_refresh(self.scroll_cursor_visible)

    def _unscroll_sideways(self) -> None:
        """Never stay scrolled sideways once the cursor's line fits in the view."""
        row = self.cursor_location[0]
        if row < self.document.line_count and self.scroll_x:
            width = self.content_size.width - self.gutter_width - 1
            if len(self.document[row].expandtabs(self.indent_width)) < width:
                self.scroll_to(x=0, animate=False)

    def action_toggle_wrap(self) -> None:
        self.soft_wrap = not self.soft_wrap
        self.scroll_cursor_visible()
        self.notify(_("Long lines wrap.") if self.soft_wrap else _("Long lines scroll sideways."), timeout=2)

    # -- highlighting near the viewport --------------------------------------------------------
    # TextArea re-queries the syntax tree of the whole file after every edit: ~10 ms for 300
    # lines on a small CPU, most of a frame per keystroke. Querying only the rows in view (and 4
    # above and below) costs ~2 ms; scrolling out of that window rebuilds it. (Same loop as
    # TextArea._build_highlight_map, with a point range.)

    _highlight_rows: tuple[int, int] = (0, -1)

    def _build_highlight_map(self) -> None:
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        if not self._highlight_query:
            return
        top, height = int(self.scroll_offset.y), max(self.size.height, 24)
        start, end = max(0, top - 4), top + height + 4
        self._highlight_rows = (start, end)
        captures = self.document.query_syntax_tree(self._highlight_query, start_point=(start, 0), end_point=(end, 0))
        for name, nodes in captures.items():
            for node in nodes:
                (first, first_col), (last, last_col) = node.start_point, node.end_point
                if first == last:
                    highlights[first].append((first_col, last_col, name))
                    continue
                highlights[first].append((first_col, None, name))
                for row in range(first + 1, last):
                    highlights[row].append((0, None, name))
                highlights[last].append((0, last_col, name))
        # One order for a row's highlights, whatever order the query returned them in (it
        # varies between edits): the row then draws the same as before and stays in the line
        # cache. Wider spans first, so a span inside another (an escape in a string) wins.
        for row_highlights in highlights.values():
            row_highlights.sort(key=_span_order)

    def _watch_scroll_y(self) -> None:
        super()._watch_scroll_y()
        start, end = self._highlight_rows
        top = int(self.scroll_offset.y)
        if self._highlight_query and (top < start or top + self.size.height > end):
            self._build_highlight_map()
            self.refresh()

    # -- drawing: unchanged lines are not drawn again ------------------------------------------
    # TextArea's own line cache is keyed by screen row and cleared on every edit, so each key
    # redrew every visible line (~0.3 ms each, 10+ ms a frame at 120x36). A line away from the
    # cursor, the selection and a matched bracket looks the same whenever its text, highlights,
    # number and the view's geometry are the same: those lines are kept by that content.

    _drawn: LRUCache[tuple[object, ...], Strip] | None = None  # created on the first draw
    # What every line of one frame shares (view geometry, settings, cursor rows); set by
    # render_lines so each line's key costs a few lookups.
    _frame: _FrameState | None = None

    def _frame_state(self) -> _FrameState:
        scroll_x, scroll_y = self.scroll_offset
        start, end = self.selection
        top, bottom = sorted((start[0], end[0])) if start != end else (-1, -1)
        view = (
            self.line_number_start,
            self.size,
            self.scrollable_content_region.size,
            self.virtual_size.width,
            None if self.soft_wrap else scroll_x,
            self.soft_wrap,
            self.wrap_width,
            self.wrapped_document._width,
            self.indent_width,
            self.gutter_width,
            self.theme,
            self.app.theme,
            self.show_line_numbers,
            self.read_only,
            self.show_cursor,
            self.highlight_cursor_line,
        )
        return scroll_y, view, end[0], top, bottom, self._matching_bracket_location

    def _content_key(self, y: int) -> tuple[object, ...] | None:
        if self.placeholder:
            return None
        scroll_y, view, cursor_row, top, bottom, bracket = self._frame or self._frame_state()
        try:
            line_index, section = self.wrapped_document._offset_to_line_info[scroll_y + y]
        except IndexError:
            return None
        if line_index == cursor_row or top <= line_index <= bottom:
            return None  # the cursor's or the selection's line: drawn as TextArea draws it
        if bracket is not None and bracket[0] == line_index:
            return None
        highlights = tuple(self._highlights.get(line_index, ()))
        # Where the line wraps as the wrapped document has it now (it is rewrapped after a
        # resize, a frame or more after the widget's own width changed).
        wraps = tuple(self.wrapped_document.get_offsets(line_index))
        return (self.document[line_index], highlights, line_index, section, wraps, view)

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame = self._frame_state()
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        key = self._content_key(y)
        if key is None:
            return super().render_line(y)
        drawn = self._drawn
        if drawn is None:
            drawn = self._drawn = LRUCache(2048)
        strip = drawn.get(key)
        if strip is None:
            strip = drawn[key] = super().render_line(y)
        return strip

    def notify_style_update(self) -> None:
        """A style or theme change: every kept line is out of date."""
        if self._drawn is not None:
            self._drawn.clear()
        super().notify_style_update()

    def action_cursor_right(self, select: bool = False) -> None:
        """→ only moves: TextArea would insert a showing suggestion (only Tab accepts it)."""
        shown, self.suggestion = self.suggestion, ""
        super().action_cursor_right(select)
        if shown:
            self.update_suggestion()

    _pending_language: str | None = None

    @classmethod
    def for_code(
        cls, text: str = "", *, read_only: bool = False, id: str | None = None, language_later: bool = False
    ) -> "CodeEditor":
        """A code editor with line numbers and soft wrap. `language_later`: start without
        syntax highlighting (loading the tree-sitter grammar costs ~50 ms) until
        `ensure_language()`, so a first screen that shows no code paints sooner."""
        # TextArea.code_editor builds `cls(...)`, so this is a CodeEditor with line numbers.
        language = None if language_later else cls.LANGUAGE
        editor = cls.code_editor(text, language=language, read_only=read_only, id=id, soft_wrap=True)
        assert isinstance(editor, CodeEditor)
        if language_later:
            editor._pending_language = cls.LANGUAGE
        return editor

    def ensure_language(self) -> None:
        """Turn on the highlighting that `for_code(language_later=True)` held back."""
        if self._pending_language is not None and self.language is None:
            language, self._pending_language = self._pending_language, None
            self.language = language

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            event.prevent_default()  # TextArea would move focus to the next widget
            self.post_message(self.EscapePressed())
        elif self.read_only:
            return
        elif event.key == "tab":
            event.stop()
            event.prevent_default()  # skip TextArea's own tab insert
            self.action_tab_key()
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self._newline_keeping_indent()

    # -- actions --------------------------------------------------------------------------------

    def in_leading_whitespace(self) -> bool:
        row, col = self.cursor_location
        line = self.document[row]
        return col <= leading_ws(line)

    def action_tab_key(self) -> None:
        start, end = self.selection
        row = self.cursor_location[0]
        if self.suggestion:  # the ghost text on this line: take it
            self.ghost, self.ghost_row = "", None
            self._insert(self.suggestion)
        elif start[0] != end[0]:
            self._indent_rows(*sorted((start[0], end[0])))
        elif not self.document[row].strip():
            self.post_message(self.HintRequested(row))  # an empty line: the learner is stuck
        elif self.in_leading_whitespace():
            self._insert(" " * self._find_columns_to_next_tab_stop())
        else:
            self.post_message(self.HintRequested(row))

    def action_dedent(self) -> None:
        if self.read_only:
            return
        start, end = self.selection
        first, last = sorted((start[0], end[0]))
        for row in range(first, last + 1):
            line = self.document[row]
            lead = leading_ws(line)
            n = min(lead, lead % self.indent_width or self.indent_width)  # to the previous tab stop
            if n and line[:n].strip(" ") == "":
                self.delete((row, 0), (row, n))

    # -- helpers --------------------------------------------------------------------------------

    def type_text(self, text: str) -> None:
        """As if typed: replaces the selection and moves the cursor (a key that arrived while
        focus was elsewhere)."""
        self._insert(text)

    def _insert(self, text: str) -> None:
        start, end = self.selection
        # What TextArea does for typed keys: replaces the selection, one undo step.
        self._replace_via_keyboard(text, start, end)

    def _indent_rows(self, first: int, last: int) -> None:
        pad = " " * self.indent_width
        for row in range(first, last + 1):
            if self.document[row].strip():
                self.insert(pad, (row, 0))

    def _newline_keeping_indent(self) -> None:
        """Enter keeps the line's indentation, one level more after a `:` (def, if, for...)."""
        row, col = min(self.selection.start, self.selection.end)
        before = self.document[row][:col]
        indent = before[: leading_ws(before)]
        if before.rstrip().endswith(":"):
            indent += " " * self.indent_width
        self._insert("\n" + indent)


def inside_a_block(lines: list[str], row: int) -> bool:
    """Whether the empty line `row` sits inside an indented block (a function body, where the
    exercise's TODOs are), judged from the nearest non-empty line above it: module-level lines
    (between the docstring and the imports) get no hint code."""
    for above in range(row - 1, -1, -1):
        text = lines[above]
        if text.strip():
            return text[:1].isspace() or text.rstrip().endswith(":")
    return False
