"""The guide: a step's Markdown, drawn by Rich inside one widget.

Why not Textual's Markdown widget: it mounts a widget per block (a guide has 20-40), which
made the first paint of `tutor start` 2.5x a bare Textual app; one Static costs one mount.
Rich's Markdown also wraps code blocks and fits tables to the width (nothing is cut at the
pane's edge).

A page seen before at the same width comes from the render cache (tutor/ui/render_cache.py),
complete and highlighted, without importing the Markdown renderer. A page drawn afresh shows
its first screen with plain code on the first paint, and all of it highlighted right after:
highlighting needs a Pygments lexer, whose first use compiles its regexes (~100 ms on a small
CPU).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from textual.widgets import Static

from tutor.ui.render_cache import RenderCache

_cache: RenderCache | None = None
_highlight = False  # turned on once the first screen is up


def use_render_cache(cache: RenderCache | None) -> None:
    """Where drawn pages are kept (the app sets it from the learner's tutor home)."""
    global _cache
    _cache = cache


def first_screen(markdown: str, lines: int) -> str:
    """The start of `markdown`, cut at the first blank line outside a code fence after
    `lines` lines (never inside a fenced block, which would render the rest as code)."""
    fenced = False
    rows = markdown.split("\n")
    for i, row in enumerate(rows):
        if row.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif i >= lines and not fenced and not row.strip():
            return "\n".join(rows[:i])
    return markdown


class _Page:
    """A page, drawn once per width: Textual asks a Static for its height and then for its
    lines, and layout settles through several passes at startup (a guide was rendered six
    times before the first paint). `rows`: draw only the first screen (that many source
    lines) unless the whole page is in the render cache."""

    def __init__(self, source: str, highlight: bool, rows: int | None) -> None:
        self.source = source
        self.highlight = highlight
        self.rows = rows
        self.complete = False  # what was drawn is the whole page, highlighted
        self._lines: dict[tuple[int, bool], list[list[Segment]]] = {}

    def _draw(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        width = options.max_width
        if _cache is not None:
            lines = _cache.load(self.source, width, "page")
            if lines is not None:
                self.complete = True
                return lines
        from tutor.ui.widgets.guide_markdown import guide_markdown

        whole = self.rows is None
        text = self.source if whole else first_screen(self.source, self.rows or 0)
        lines = console.render_lines(guide_markdown(text, self.highlight), options)
        self.complete = whole and self.highlight
        if self.complete and _cache is not None:
            _cache.store(self.source, width, "page", lines)
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (options.max_width, console.is_terminal)
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = self._draw(console, options)
        new_line = Segment.line()
        for line in lines:
            yield from line
            yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


class GuideView(Static):
    """Shows one step's Markdown; `source` is the text shown."""

    source = ""
    # Rich draws the guide's links as plain styled text (hyperlinks=False): nothing for Textual
    # to restyle, and walking every segment for "@click" cost ~5 ms of the first paint.
    auto_links = False
    _page: _Page | None = None

    def show(self, markdown: str) -> None:
        self.source = markdown
        # Before the first screen is up, only the part that fills it: rendering a whole page
        # held the first paint back by ~20 ms. `highlight_code` (just after) shows it all.
        # A source line renders to at least one row, so the terminal's height in lines fills
        # the pane.
        rows = None if _highlight else self.app.size.height or 60
        self._page = _Page(markdown, _highlight, rows)
        self.update(self._page)

    def highlight_code(self) -> None:
        """Highlight code blocks from now on (call after the first paint)."""
        global _highlight
        _highlight = True
        if self.source and not (self._page is not None and self._page.complete):
            self.show(self.source)
