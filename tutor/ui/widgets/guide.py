"""The guide: a step's Markdown, drawn by Rich inside one widget.

Why not Textual's Markdown widget: it mounts a widget per block (a guide has 20-40), which
made the first paint of `tutor start` 2.5x a bare Textual app; one Static costs one mount.
Rich's Markdown also wraps code blocks and fits tables to the width (nothing is cut at the
pane's edge).

Code blocks show plain on the first paint and highlighted right after: highlighting needs a
Pygments lexer, whose first use compiles its regexes (~100 ms on a small CPU).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static


class _CodeBlock(CodeBlock):
    highlight: ClassVar[bool] = False  # turned on once the first screen is up

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        if _CodeBlock.highlight:
            yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=1)
        else:
            yield Padding(Text(code, style="on #272822"), 1, style="on #272822")


class GuideMarkdown(Markdown):
    elements = {**Markdown.elements, "fence": _CodeBlock, "code_block": _CodeBlock}


class _PerWidth:
    """Renders once per width and replays the lines: Textual asks a Static for its height and
    then for its lines, and layout settles through several passes at startup (a guide was
    rendered six times before the first paint)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._lines: dict[tuple[int, bool], list[list[Segment]]] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (options.max_width, console.is_terminal)
        lines = self._lines.get(key)
        if lines is None:
            lines = console.render_lines(self.renderable, options)
            self._lines[key] = lines
        new_line = Segment.line()
        for line in lines:
            yield from line
            yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


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


class GuideView(Static):
    """Shows one step's Markdown; `source` is the text shown."""

    source = ""
    _partial = False
    # Rich draws the guide's links as plain styled text (hyperlinks=False): nothing for Textual
    # to restyle, and walking every segment for "@click" cost ~5 ms of the first paint.
    auto_links = False  # showing only the first screen of `source`

    def show(self, markdown: str) -> None:
        self.source = markdown
        # Before the first screen is up, only the part that fills it: rendering a whole page
        # held the first paint back by ~20 ms. `highlight_code` (just after) shows it all.
        # A source line renders to at least one row, so the terminal's height in lines fills
        # the pane.
        shown = markdown if _CodeBlock.highlight else first_screen(markdown, self.app.size.height or 60)
        self._partial = shown is not markdown
        self.update(_PerWidth(GuideMarkdown(shown, code_theme="monokai", hyperlinks=False)))

    def highlight_code(self) -> None:
        """Highlight code blocks from now on (call after the first paint)."""
        again = not _CodeBlock.highlight or self._partial
        _CodeBlock.highlight = True
        if again and self.source:
            self.show(self.source)
