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

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.padding import Padding
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


class GuideView(Static):
    """Shows one step's Markdown; `source` is the text shown."""

    source = ""

    def show(self, markdown: str) -> None:
        self.source = markdown
        self.update(GuideMarkdown(markdown, code_theme="monokai", hyperlinks=False))

    def highlight_code(self) -> None:
        """Highlight code blocks from now on (call after the first paint)."""
        if not _CodeBlock.highlight:
            _CodeBlock.highlight = True
            if self.source:
                self.show(self.source)
