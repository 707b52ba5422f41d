"""The memory timeline plot: units, bad points left out, drawn in the app, no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from textual.app import App, ComposeResult

from tutor.ui.widgets.memory_plot import MemoryPlot, series, unit_for

FIGURE = {
    "learner_bytes": 3 * 2**20,
    "reference_bytes": 2 * 2**20,
    "device": "cpu",
    "timeline": {
        "learner": [[0.0, 0], [0.002, 2**20], [0.004, 3 * 2**20], [0.006, 0]],
        "reference": [[0.0, 0], [0.001, 2 * 2**20], [0.003, 0], ["x", 5], [0.1]],
    },
}


def test_series_scales_to_readable_units_and_drops_bad_points() -> None:
    lines, t_unit, m_unit = series(FIGURE)
    assert (t_unit, m_unit) == ("ms", "MiB")
    (mine, _, xs, ys), (ref, _, rxs, rys) = lines
    assert (mine, ref) == ("yours", "reference")
    assert xs == [0.0, 2.0, 4.0, 6.0] and ys == [0.0, 1.0, 3.0, 0.0]
    assert len(rxs) == 3 and max(rys) == 2.0  # the two malformed points are gone
    assert series({"learner_bytes": 1, "reference_bytes": 1})[0] == []
    assert unit_for(512) == ("B", 1.0) and unit_for(3 * 2**30)[0] == "GiB"


async def test_plot_draws_both_lines_in_the_app() -> None:
    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield MemoryPlot("memory", FIGURE)

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        plot = app.query_one(MemoryPlot)
        assert plot.size.height == 14
        text = str(plot.render())
        assert "live tensor memory" in text
        assert "yours" in text and "reference" in text
        assert any("\u2800" < ch <= "\u28ff" for ch in text)  # braille dots: the lines


def test_the_widget_does_not_import_torch() -> None:
    code = "import sys, tutor.ui.widgets.memory_plot; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


async def test_results_panel_shows_the_plot_for_a_memory_figure_with_a_timeline() -> None:
    from tutor.runner.protocol import Verdict
    from tutor.ui.widgets.results import ResultsPanel

    class Panel(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultsPanel(id="results")

    app = Panel()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(ResultsPanel)
        plain = {k: v for k, v in FIGURE.items() if k != "timeline"}
        panel.show_verdict(Verdict(status="passed", reason="ok", figures={"memory": plain}), "x")
        await pilot.pause()
        assert not app.query(MemoryPlot)
        panel.show_verdict(Verdict(status="passed", reason="ok", figures={"memory": FIGURE}), "x")
        await pilot.pause()
        plots = app.query(MemoryPlot)
        assert len(plots) == 1 and plots.first().label == "memory"
        # A second memory verdict replaces the chart; a verdict without one (a passage) and a
        # new run clear it: charts of earlier checks never pile up under later results.
        panel.show_verdict(Verdict(status="failed", reason="no", figures={"memory": FIGURE}), "x")
        await pilot.pause()
        assert len(app.query(MemoryPlot)) == 1
        panel.show_verdict(Verdict(status="passed", reason="the program ran to the end"), "passage")
        await pilot.pause()
        assert not app.query(MemoryPlot)
        panel.show_verdict(Verdict(status="passed", reason="ok", figures={"memory": FIGURE}), "x")
        await pilot.pause()
        panel.start("next")
        await pilot.pause()
        assert not app.query(MemoryPlot)


async def test_the_memory_axis_starts_at_zero() -> None:
    # Nothing live during the call (all freed at once): plotext would centre the axis on 0.
    flat = {**FIGURE, "timeline": {"learner": [[0.0, 0], [0.004, 0]], "reference": [[0.0, 0], [0.002, 0]]}}

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield MemoryPlot("memory", flat)

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = str(app.query_one(MemoryPlot).render())
        assert "-" not in "".join(ch for line in text.splitlines() for ch in line.split("┤")[0]), text
