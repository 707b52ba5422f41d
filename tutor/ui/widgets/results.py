"""The results panel: progress while a check runs, then the verdict with figures and output.

Learner text (the reason, details, output, tracebacks) goes through `tutor.textsafe.clean`
and is shown as plain rich `Text`, never parsed as markup. A memory figure with a timeline is
drawn by `tutor.ui.widgets.memory_plot.MemoryPlot` when that module is present (see
`timeline_widget`); without it the panel shows the numbers only.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import LoadingIndicator, Static

from tutor.i18n import N_, _
from tutor.formatting import OUTPUT_LINES
from tutor.runner.protocol import Event, Verdict
from tutor.status import status_of
from tutor.textsafe import clean
from tutor.ui.figures import figures_view, is_memory, label_for, labels_of
from tutor.ui.phase_log import PhaseLog


def verdict_body(verdict: Verdict) -> RenderableType:
    """Reason, details, figures and the program's output, as one Rich renderable."""
    parts: list[RenderableType] = []
    if verdict.reason:
        parts.append(Text(clean(verdict.reason), style="bold" if not verdict.passed else ""))
    for line in verdict.details:  # indented as a block: a wrapped detail stays indented
        parts.append(Padding(Text(clean(line)), (0, 0, 0, 2)))
    figures = figures_view(verdict.figures)
    if figures is not None:
        parts.append(Text(""))
        parts.append(figures)
    output = clean(verdict.output).rstrip()
    if output:
        lines = output.splitlines()
        shown = lines[-OUTPUT_LINES:]
        title = _("output")
        if len(lines) > len(shown) or verdict.output_truncated:
            title = _("output (last lines only)")
        parts.append(Text(""))
        parts.append(Text(title, style="bold underline"))
        parts.append(Text("\n".join(shown)))
    return Group(*parts)


def timeline_widget(label: str, figure: dict[str, Any]) -> Widget | None:
    """The hook for a memory figure's timeline ({"learner": [[t_s, bytes], ...], "reference":
    [...]}): `MemoryPlot(label, figure)` from tutor/ui/widgets/memory_plot.py, if it exists."""
    if not isinstance(figure.get("timeline"), dict):
        return None
    try:
        from tutor.ui.widgets.memory_plot import MemoryPlot
    except ImportError:
        return None
    widget: Widget = MemoryPlot(label, figure)
    return widget


class ResultsPanel(VerticalScroll):
    """Running phase with elapsed time, or the last verdict; or a note before any run.
    Hidden while it has nothing to say (-empty) and after Esc closed it (-closed)."""

    def __init__(self, *, id: str | None = None) -> None:
        # Children built here, not in compose(): the screen mounts this panel and uses it in
        # the same call, before a compose() would have run.
        super().__init__(
            Static(id="results-banner"),
            Horizontal(LoadingIndicator(id="results-spinner"), Static(id="results-phase"), id="results-running"),
            Static(id="results-body"),
            Vertical(id="results-plots"),
            id=id,
        )
        self.border_title = _("Results")
        self._title = ""
        self._next_hint = ""  # a message id: translated when drawn, so a language switch redraws it
        self._log = PhaseLog("", 0.0)
        self._ran = False  # the run is a typed-along passage's program, not a check
        self._live: list[str] = []
        self._ticker: Timer | None = None
        self.verdict: Verdict | None = None

    # -- states ---------------------------------------------------------------------------------

    def _state(self, state: str) -> None:
        for s in ("idle", "running", "passed", "failed"):
            self.set_class(s == state, f"-{s}")
        self.remove_class("-closed")
        # The plots of the last verdict go with it (a selector on self would match only the
        # panel's direct children, and the plots are one level down).
        self.query_one("#results-plots", Vertical).remove_children()

    @property
    def open(self) -> bool:
        return not (self.has_class("-empty") or self.has_class("-closed"))

    def close(self) -> None:
        self.add_class("-closed")

    def reopen(self) -> bool:
        """Show the panel again after Esc; False when it has nothing to show."""
        self.remove_class("-closed")
        return not self.has_class("-empty")

    def show_idle(self, message: str = "") -> None:
        """Before any run: a note (e.g. this machine will skip the check), or nothing."""
        self._stop_ticker()
        self.verdict = None
        self._state("idle")
        self.set_class(not message, "-empty")
        self.query_one("#results-banner", Static).update(Text(message))
        self.query_one("#results-body", Static).update("")

    def start(self, title: str, first_phase: str = N_("starting the runner"), ran: bool = False) -> None:
        """A check of `title` began (`ran`: the program of a typed-along passage); each phase
        the runner names ticks with its own clock until the verdict. `first_phase` is a message
        id: what happens before the runner says anything."""
        self.verdict = None
        self._log = PhaseLog(first_phase, time.monotonic())
        self._title, self._ran = title, ran
        self._live = []
        self._state("running")
        self.remove_class("-empty")
        self.query_one("#results-banner", Static).update(Text(self._running_banner()))
        self.query_one("#results-body", Static).update("")
        self._stop_ticker()
        self._ticker = self.set_interval(0.25, self._tick)
        self._tick()

    def add_event(self, event: Event) -> None:
        """Runner events, already moved onto the UI thread."""
        if event.kind == "phase" and event.text:
            before = len(self._log.done)
            self._log.enter(clean(event.text), time.monotonic())
            if len(self._log.done) != before:
                self._show_running_body()
        elif event.kind == "output" and event.text:
            self._live = (self._live + clean(event.text).splitlines())[-8:]
            self._show_running_body()
        self._tick()

    def _running_banner(self) -> str:
        if self._ran:
            return _("Running {title}…", title=self._title)
        return _("Checking {title}…", title=self._title)

    def _show_running_body(self) -> None:
        """The phases over (each with its time), then the program's latest output lines."""
        text = Text(style="dim")
        done = self._log.listed()
        if done:
            text.append("  ".join(f"✓ {_(phase)} {seconds:.1f} s" for phase, seconds in done))
        if self._live:
            text.append(("\n" if done else "") + "\n".join(self._live))
        self.query_one("#results-body", Static).update(text)

    def _tick(self) -> None:
        # The runner's phases arrive in the learner's language; ours is a message id.
        phase, seconds, total = self._log.current(time.monotonic())
        line = f"{_(phase)} · {seconds:.1f} s"
        if self._log.done:
            line += "  ·  " + _("{seconds} s in all", seconds=f"{total:.1f}")
        self.query_one("#results-phase", Static).update(Text(line))

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def show_verdict(self, verdict: Verdict, title: str, next_hint: str = "", ran: bool | None = None) -> None:
        """`next_hint` is a message id (marked with N_), shown translated after the headline.
        `ran`: the verdict of a passage's program (it ran, or it stopped with an error), not
        of a check; by default, what the run that just ended was."""
        self._stop_ticker()
        self.verdict = verdict
        self._ran = self._ran if ran is None else ran
        self._title, self._next_hint = title, next_hint
        self._state("passed" if verdict.passed else "failed")
        self.remove_class("-empty")
        self._show_headline()
        self.query_one("#results-body", Static).update(verdict_body(verdict))
        labels = labels_of(verdict.figures)
        plots = [
            w
            for name, value in verdict.figures.items()
            if is_memory(value)
            if (w := timeline_widget(label_for(name, labels), value)) is not None
        ]
        if plots:
            self.query_one("#results-plots", Vertical).mount_all(plots)
        self.scroll_home(animate=False)

    def drop_next_hint(self) -> None:
        """The note after the headline has been acted on (the hint it offered is shown)."""
        if self.verdict is not None and self._next_hint:
            self._next_hint = ""
            self._show_headline()

    def _show_headline(self) -> None:
        verdict, title, next_hint = self.verdict, self._title, self._next_hint
        assert verdict is not None
        status = status_of(verdict.status)
        headline = f"{status.headline(self._ran) if status is not None else verdict.status.upper()}  {title}"
        if verdict.duration_s:
            headline += f"  ·  {verdict.duration_s:.1f} s"
        if verdict.passed and self._ran:
            headline += "  ·  " + (_("its output is below") if verdict.output.strip() else _("it printed nothing"))
        elif verdict.passed:
            headline += "  ·  " + _("well done!") + (f"  {_(next_hint)}" if next_hint else "")
        elif next_hint:
            headline += f"  ·  {_(next_hint)}"
        self.query_one("#results-banner", Static).update(Text(headline))

    def relabel(self, title: str, idle: str = "") -> None:
        """Draw the panel again in the current language (after a language switch), keeping
        whether it was closed and where it was scrolled. A verdict's reason, details and output
        stay as the runner gave them; `idle` is the note to show when there is no verdict."""
        self.border_title = _("Results")
        closed, scroll = self.has_class("-closed"), self.scroll_y
        if self.running:
            self._title = title
            self.query_one("#results-banner", Static).update(Text(self._running_banner()))
            self._show_running_body()
            self._tick()
            return
        if self.verdict is not None:
            self.show_verdict(self.verdict, title, self._next_hint)
        else:
            self.show_idle(idle)
        self.set_class(closed, "-closed")
        self.call_after_refresh(self.scroll_to, y=scroll, animate=False)

    @property
    def running(self) -> bool:
        return self.has_class("-running")
