"""The guide's Markdown renderer (Rich's, with code blocks that can wait for highlighting).

Imported only when a page has to be drawn afresh: markdown-it, Rich's Markdown and Pygments
take ~25 ms to import, and a page found in the render cache needs none of them.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

CODE_THEME = "monokai"


class _PlainCodeBlock(CodeBlock):
    """A code block without highlighting: the first use of a Pygments lexer compiles its
    regexes (~100 ms on a small CPU), too slow for the first paint."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Padding(Text(code, style="on #272822"), 1, style="on #272822")


class _CodeBlock(CodeBlock):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=1)


class _PlainGuide(Markdown):
    elements = {**Markdown.elements, "fence": _PlainCodeBlock, "code_block": _PlainCodeBlock}


class _Guide(Markdown):
    elements = {**Markdown.elements, "fence": _CodeBlock, "code_block": _CodeBlock}


def guide_markdown(text: str, highlight: bool) -> Markdown:
    """`text` as the guide draws it; code highlighted or plain."""
    cls = _Guide if highlight else _PlainGuide
    return cls(text, code_theme=CODE_THEME, hyperlinks=False)
