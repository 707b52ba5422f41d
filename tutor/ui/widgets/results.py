"""The results panel: progress while a check runs, then the verdict with figures and output."""

from __future__ import annotations

import time

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import LoadingIndicator, Static

from tutor.runner.protocol import (CANCELLED, CRASHED, ERROR, FAILED, PASSED, SKIPPED, TIMEOUT,
                                   Event, Verdict)
from tutor.ui.figures import figures_view

OUTPUT_LINES = 40  # the tail of the program's output that the panel shows

_HEADLINES = {
    PASSED: "✔ PASS",
    FAILED: "✘ FAIL",
    ERROR: "✘ ERROR",
    TIMEOUT: "⏱ TIMEOUT",
    CRASHED: "✘ CRASHED",
    SKIPPED: "⊘ SKIPPED",
    CANCELLED: "⊘ CANCELLED",
}


def verdict_body(verdict: Verdict) -> RenderableType:
    """Reason, details, figures and the program's output, as one Rich renderable."""
    parts: list[RenderableType] = []
    if verdict.reason:
        parts.append(Text(verdict.reason, style="bold" if not verdict.passed else ""))
    for line in verdict.details:
        parts.append(Text("  " + line))
    figures = figures_view(verdict.figures)
    if figures is not None:
        parts.append(Text(""))
        parts.append(figures)
    output = verdict.output.rstrip()
    if output:
        lines = output.splitlines()
        shown = lines[-OUTPUT_LINES:]
        title = "output"
        if len(lines) > len(shown) or verdict.output_truncated:
            title += " (last lines only)"
        parts.append(Text(""))
        parts.append(Text(title, style="bold underline"))
        parts.append(Text("\n".join(shown)))
    return Group(*parts)


class ResultsPanel(VerticalScroll):
    """Idle hint, running phase with elapsed time, or the last verdict."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._started = 0.0
        self._phase = ""
        self._live: list[str] = []
        self._ticker: Timer | None = None
        self.verdict: Verdict | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="results-banner")
        with Horizontal(id="results-running"):
            yield LoadingIndicator(id="results-spinner")
            yield Static(id="results-phase")
        yield Static(id="results-body")

    # -- states ---------------------------------------------------------------------------------

    def _state(self, state: str) -> None:
        for s in ("idle", "running", "passed", "failed"):
            self.set_class(s == state, f"-{s}")

    def show_idle(self, message: str) -> None:
        self._stop_ticker()
        self.verdict = None
        self._state("idle")
        self.query_one("#results-banner", Static).update(message)
        self.query_one("#results-body", Static).update("")

    def start(self, title: str) -> None:
        """A check of `title` began; elapsed time ticks until the verdict."""
        self.verdict = None
        self._started = time.monotonic()
        self._phase = "starting the runner"
        self._live = []
        self._state("running")
        self.query_one("#results-banner", Static).update(f"Checking {title}…")
        self.query_one("#results-body", Static).update("")
        self._stop_ticker()
        self._ticker = self.set_interval(0.25, self._tick)
        self._tick()

    def add_event(self, event: Event) -> None:
        """Runner events, already moved onto the UI thread."""
        if event.kind == "phase" and event.text:
            self._phase = event.text
        elif event.kind == "output" and event.text:
            self._live = (self._live + event.text.splitlines())[-8:]
            self.query_one("#results-body", Static).update(Text("\n".join(self._live), style="dim"))
        self._tick()

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._started
        self.query_one("#results-phase", Static).update(f"{self._phase} · {elapsed:.1f} s")

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def show_verdict(self, verdict: Verdict, title: str, next_hint: str = "") -> None:
        self._stop_ticker()
        self.verdict = verdict
        self._state("passed" if verdict.passed else "failed")
        headline = f"{_HEADLINES.get(verdict.status, verdict.status.upper())}  {title}"
        if verdict.duration_s:
            headline += f"  ·  {verdict.duration_s:.1f} s"
        if verdict.passed:
            headline += "  ·  well done!" + (f"  {next_hint}" if next_hint else "")
        self.query_one("#results-banner", Static).update(headline)
        self.query_one("#results-body", Static).update(verdict_body(verdict))
        self.scroll_home(animate=False)

    @property
    def running(self) -> bool:
        return self.has_class("-running")
