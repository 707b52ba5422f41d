"""The guide's Markdown renderer (Rich's, with code blocks that can wait for highlighting and
that wrap between tokens).

Imported only when a page has to be drawn afresh: markdown-it, Rich's Markdown and Pygments
take ~25 ms to import, and a page found in the render cache needs none of them.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax

from tutor.ui.codewrap import break_points, hang_for

CODE_THEME = "monokai"


BACKGROUND = "#272822"  # the code theme's background, for rows drawn without highlighting


def _code_rows(console: Console, options: ConsoleOptions, code: str, syntax: Syntax | None, theme: str) -> RenderResult:
    """A code block at the pane's width, one cell of padding around it; a line wider than
    the pane goes on over more rows, broken only between tokens (tutor/ui/codewrap.py) and
    indented under its code after a dim ↪, never cut mid-word as Rich's word wrap does."""
    lines = code.split("\n")
    width = options.max_width
    inner = max(1, width - 2)
    bg = Syntax.get_theme(theme).get_background_style() if syntax else Style.parse(f"on {BACKGROUND}")
    mark = bg + Style(dim=True)
    if syntax is not None:
        natural = max((cell_len(line) for line in lines), default=0) + 1
        drawn = console.render_lines(syntax, options.update(width=natural, height=None), pad=False)
    else:
        drawn = [[Segment(line, bg)] for line in lines]
    new_line = Segment.line()
    blank = [Segment(" " * width, bg), new_line]
    yield from blank
    for text, segments in zip(lines, drawn):
        segments = list(Segment.adjust_line_length(segments, cell_len(text), bg, pad=False))
        starts = break_points(text, inner, hang := hang_for(text, inner))
        cuts = [cell_len(text[:b]) for b in starts[1:]] + [cell_len(text)]
        for i, piece in enumerate(Segment.divide(segments, cuts)):
            row: list[Segment] = [Segment(" ", bg)]
            if i:
                lead = max(0, hang - 2)
                row += [Segment(" " * lead, bg), Segment("↪ "[: hang - lead], mark)]
            row += piece
            yield from Segment.adjust_line_length(row, width, bg)
            yield new_line
    yield from blank


class _PlainCodeBlock(CodeBlock):
    """A code block without highlighting: the first use of a Pygments lexer compiles its
    regexes (~100 ms on a small CPU), too slow for the first paint."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip().expandtabs(4)
        yield from _code_rows(console, options, code, None, self.theme)


class _CodeBlock(CodeBlock):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip().expandtabs(4)
        syntax = Syntax(code, self.lexer_name, theme=self.theme, word_wrap=False, padding=0, tab_size=4)
        yield from _code_rows(console, options, code, syntax, self.theme)


class _PlainGuide(Markdown):
    elements = {**Markdown.elements, "fence": _PlainCodeBlock, "code_block": _PlainCodeBlock}


class _Guide(Markdown):
    elements = {**Markdown.elements, "fence": _CodeBlock, "code_block": _CodeBlock}


def guide_markdown(text: str, highlight: bool) -> Markdown:
    """`text` as the guide draws it; code highlighted or plain."""
    cls = _Guide if highlight else _PlainGuide
    return cls(text, code_theme=CODE_THEME, hyperlinks=False)
