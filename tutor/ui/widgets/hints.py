"""The hint panel: revealed hints, newest last, beside (never inside) the learner's code."""

from __future__ import annotations

import ast
import re

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tutor.i18n import _

_CODE = re.compile(r"```(?:\w+)?\n(.*?)```|`([^`\n]+)`", re.DOTALL)


def code_suggestion(hint: str) -> str | None:
    """The first fenced or backticked code in a hint if it is one line (shown as ghost text)."""
    m = _CODE.search(hint)
    if not m:
        return None
    code = (m.group(1) or m.group(2) or "").strip()
    if not code or "\n" in code or _KEYWORD_FRAGMENT.match(code):
        return None
    try:
        ast.parse(code)  # a whole statement; `F.relu`-style names parse too, and fit a line
    except SyntaxError:
        return None
    return code


# `dynamic=True`: an argument to add inside a call, not a line of its own (an assignment has
# spaces around its `=` in this course's code).
_KEYWORD_FRAGMENT = re.compile(r"^\w+=[^=]")


class HintPanel(VerticalScroll):
    """Hidden until the first hint; then "Hint i/n" for each revealed one (scrolls if long).
    Esc closes it (-closed); the next hint opens it again."""

    def __init__(self, *, id: str | None = None) -> None:
        # The child is built here, not in compose(): the screen uses it right after mounting.
        super().__init__(Static(id="hints-text"), id=id)
        self.border_title = _("Hints")
        self.targeted: str | None = None  # the targeted hint shown, if that is what shows

    @property
    def open(self) -> bool:
        return self.has_class("-visible") and not self.has_class("-closed")

    def close(self) -> None:
        self.add_class("-closed")

    def reopen(self) -> bool:
        self.remove_class("-closed")
        return self.has_class("-visible")

    def show_targeted(self, hint: str) -> None:
        """A hint for the mistake the last check recognised (not one of the ladder's)."""
        from rich.markdown import Markdown as RichMarkdown  # ~25 ms to import: not before the first paint

        self.targeted = hint
        parts: list[RenderableType] = [
            Text(_("For the mistake your last check found"), style="bold"),
            RichMarkdown(hint),
        ]
        if code_suggestion(hint):
            parts.append(
                Text(
                    _("Its code shows dim on the line where you pressed Tab: Tab there inserts it."), style="italic dim"
                )
            )
        self.query_one("#hints-text", Static).update(Group(*parts))
        self.add_class("-visible")
        self.remove_class("-closed")
        # Short enough for the panel at 80 columns (the ladder's title is as short).
        self.border_title = _("Your mistake · Tab: next · Esc: close")
        self.scroll_home(animate=False)

    def show_hints(self, hints: tuple[str, ...], revealed: int) -> None:
        self.targeted = None
        if revealed <= 0:
            self.remove_class("-visible")
            self.query_one("#hints-text", Static).update("")
            return
        from rich.markdown import Markdown as RichMarkdown

        parts: list[RenderableType] = []
        for i, hint in enumerate(hints[:revealed], start=1):
            newest = i == revealed
            parts.append(Text(_("Hint {i}/{n}", i=i, n=len(hints)), style="bold" if newest else "dim bold"))
            parts.append(RichMarkdown(hint, style="" if newest else "dim"))
        if code_suggestion(hints[revealed - 1]):
            parts.append(
                Text(
                    _("Its code shows dim on the line where you pressed Tab: Tab there inserts it."), style="italic dim"
                )
            )
        self.query_one("#hints-text", Static).update(Group(*parts))
        self.add_class("-visible")
        self.remove_class("-closed")
        # What the keys do goes in the title line, so the newest hint keeps the panel's rows.
        more = _("F9: solution") if revealed >= len(hints) else _("Tab: next")
        self.border_title = _("Hints {revealed}/{n} · {more} · Esc: close", revealed=revealed, n=len(hints), more=more)
        self.scroll_end(animate=False)
