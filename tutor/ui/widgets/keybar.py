"""The key bar: the bindings that help on this step, one line, like Textual's Footer but drawn
as a single widget (the Footer builds a widget per key and rebuilds them all on every focus
change: ~50 ms of the first paint on a small CPU). A click on a key runs its action."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static

from tutor.i18n import _


class KeyBar(Static):
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    """

    def __init__(self, *, id: str | None = None, shows: Callable[[Binding], bool] | None = None) -> None:
        super().__init__(id=id)
        self._shows = shows  # the screen's say on which of its shown bindings help on this step
        # (first cell, last cell, namespace, action) of each key shown, for clicks
        self._spans: list[tuple[int, int, DOMNode, str]] = []
        self.shown: list[tuple[str, Binding]] = []  # (key label, binding), in order
        self._text = Text()

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.call_after_refresh(self.refresh_keys)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if self.is_attached and screen is self.screen:
            self.refresh_keys()

    def refresh_keys(self) -> None:
        """One entry per action, in binding-chain order (focused widget first, app last)."""
        text = Text(no_wrap=True, overflow="ellipsis")
        spans: list[tuple[int, int, DOMNode, str]] = []
        shown: list[tuple[str, Binding]] = []
        actions: set[str] = set()
        key_style = self.app.current_theme.accent or "bold"
        for namespace, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not binding.show or not enabled or binding.action in actions:
                continue
            if self._shows is not None and namespace is self.screen and not self._shows(binding):
                continue
            actions.add(binding.action)
            label = self.app.get_key_display(binding)
            start = text.cell_len
            text.append(f" {label} ", style=f"bold {key_style}")
            text.append(f"{_(binding.description)} ")
            spans.append((start, text.cell_len, namespace, binding.action))
            shown.append((label, binding))
        self._spans, self.shown = spans, shown
        # Called on every bindings change (focus moves, each screen refresh at startup): the
        # same keys again need no repaint, and a one-row bar never needs a layout pass.
        if text != self._text:
            self._text = text
            self.update(text, layout=False)

    async def on_click(self, event: events.Click) -> None:
        for start, end, namespace, action in self._spans:
            if start <= event.x < end:
                event.stop()
                await self.app.run_action(action, namespace)
                return
