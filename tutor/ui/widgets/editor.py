"""The code editor: a TextArea with auto-indent, and Tab that means "hint" unless indenting.

Tab choice (documented in the help screen): Tab inserts indentation when the cursor sits in
the leading whitespace of a line (or several lines are selected), because that is where a
Python programmer expects Tab to indent; anywhere else Tab asks for the next hint.
Shift+Tab always removes one level of indentation from the current or selected lines.

Ghost text: when the latest hint holds a one-line code suggestion (`like this`), it shows dim
on empty lines; Right arrow (→) at the end of such a line accepts it.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


def leading_ws(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class CodeEditor(TextArea):
    # Tests set this to None so snapshots do not depend on tree-sitter being installed.
    LANGUAGE: ClassVar[str | None] = "python"

    BINDINGS = [
        Binding("tab", "tab_key", "Hint", id="hint", tooltip="Next hint (indents in leading whitespace)"),
        Binding("shift+tab", "dedent", "Dedent", id="dedent", show=False),
    ]

    class HintRequested(Message):
        """Tab outside leading whitespace: the screen reveals the next hint."""

    ghost = ""  # the latest hint's code suggestion, shown on empty lines

    def set_ghost(self, code: str | None) -> None:
        self.ghost = code if code and "\n" not in code else ""
        self.update_suggestion()

    def update_suggestion(self) -> None:
        """TextArea's hook after edits; we also call it when the cursor moves."""
        row, col = self.cursor_location
        line = self.document[row] if row < self.document.line_count else ""
        show = bool(self.ghost) and not line.strip() and col == len(line) and self.selection.is_empty
        self.suggestion = self.ghost if show else ""

    def watch_selection(self) -> None:
        self.update_suggestion()

    # -- highlighting near the viewport --------------------------------------------------------
    # TextArea re-queries the syntax tree of the whole file after every edit: ~10 ms for 300
    # lines on a small CPU, most of a frame per keystroke. Querying only the rows within half a
    # screen above and below the viewport keeps typing well under 16 ms; scrolling out of that
    # window rebuilds it. (Same loop as TextArea._build_highlight_map, with a point range.)

    _highlight_rows: tuple[int, int] = (0, -1)

    def _build_highlight_map(self) -> None:
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        if not self._highlight_query:
            return
        top, height = int(self.scroll_offset.y), max(self.size.height, 24)
        start, end = max(0, top - height // 2), top + height + height // 2
        self._highlight_rows = (start, end)
        captures = self.document.query_syntax_tree(self._highlight_query, start_point=(start, 0),
                                                   end_point=(end, 0))
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

    def _watch_scroll_y(self) -> None:
        super()._watch_scroll_y()
        start, end = self._highlight_rows
        top = int(self.scroll_offset.y)
        if self._highlight_query and (top < start or top + self.size.height > end):
            self._build_highlight_map()
            self.refresh()

    def action_cursor_right(self, select: bool = False) -> None:
        if self.suggestion:
            self.ghost = ""  # accepted: show it no more
        super().action_cursor_right(select)

    @classmethod
    def for_code(cls, text: str = "", *, read_only: bool = False, id: str | None = None) -> "CodeEditor":
        # TextArea.code_editor builds `cls(...)`, so this is a CodeEditor with line numbers.
        editor = cls.code_editor(text, language=cls.LANGUAGE, read_only=read_only, id=id)
        assert isinstance(editor, CodeEditor)
        return editor

    async def _on_key(self, event: events.Key) -> None:
        if self.read_only:
            return
        if event.key == "tab":
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
        if start[0] != end[0]:
            self._indent_rows(*sorted((start[0], end[0])))
        elif self.in_leading_whitespace():
            self._insert(" " * self._find_columns_to_next_tab_stop())
        else:
            self.post_message(self.HintRequested())

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
