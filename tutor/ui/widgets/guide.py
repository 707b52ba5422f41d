"""The guide: Textual's Markdown, with code blocks that wrap and highlight after the first paint.

Highlighting a code block imports Pygments and its lexers (~100 ms on a small CPU), which
would delay the first screen; so a fence first shows its code plain and highlights itself
once the screen is up (the Pygments import is paid once, off the first frame).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence


class GuideFence(MarkdownFence):
    """A code block: plain until mounted, then highlighted. Wraps (see tutor.tcss)."""

    _plain_first = True
    _highlighted = False  # set once the deferred highlight has run

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        if cls._plain_first:
            return Content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)

    def on_mount(self) -> None:
        # After the first frame, and a little later still: the screen is busy until then.
        self.call_after_refresh(self.set_timer, 0.25, self._highlight_now)

    def _highlight_now(self) -> None:
        code = MarkdownFence.highlight(self.code, self.lexer, ansi=self.app.native_ansi_color,
                                       dark=self.app.current_theme.dark)
        self._highlighted_code = code
        self._highlighted = True
        self.set_content(code)

    def notify_style_update(self) -> None:
        # A theme change re-highlights (MarkdownFence does the same, through highlight()).
        if self._highlighted:
            self._highlight_now()
        MarkdownBlock.notify_style_update(self)


class Guide(Markdown):
    BLOCKS: dict[str, Any] = {**Markdown.BLOCKS, "fence": GuideFence, "code_block": GuideFence}
