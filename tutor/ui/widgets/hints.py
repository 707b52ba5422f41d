"""The hint panel: revealed hints, newest last, beside (never inside) the learner's code."""

from __future__ import annotations

import re

from rich.console import Group
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

_CODE = re.compile(r"```(?:\w+)?\n(.*?)```|`([^`\n]+)`", re.DOTALL)


def code_suggestion(hint: str) -> str | None:
    """The first fenced or backticked code in a hint if it is one line (shown as ghost text)."""
    m = _CODE.search(hint)
    if not m:
        return None
    code = (m.group(1) or m.group(2) or "").strip()
    return code if code and "\n" not in code else None


class HintPanel(VerticalScroll):
    """Hidden until the first hint; then "Hint i/n" for each revealed one (scrolls if long)."""

    def compose(self) -> ComposeResult:
        yield Static(id="hints-text")

    def show_hints(self, hints: tuple[str, ...], revealed: int) -> None:
        if revealed <= 0:
            self.remove_class("-visible")
            self.query_one("#hints-text", Static).update("")
            return
        parts = []
        for i, hint in enumerate(hints[:revealed], start=1):
            newest = i == revealed
            parts.append(Text(f"Hint {i}/{len(hints)}", style="bold" if newest else "dim bold"))
            parts.append(RichMarkdown(hint, style="" if newest else "dim"))
        if revealed >= len(hints):
            more = "No more hints: Tab again offers the reference solution."
        else:
            more = "Tab (outside indentation) for the next hint."
        if code_suggestion(hints[revealed - 1]):
            more += "  On an empty line, → accepts the suggested code."
        parts.append(Text(more, style="italic dim"))
        self.query_one("#hints-text", Static).update(Group(*parts))
        self.add_class("-visible")
        self.scroll_end(animate=False)
