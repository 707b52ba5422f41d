"""Figures named by what they compare, in the learner's language: a time or memory figure whose
two rows are not yours and the reference's carries `sides`, and a checker's figure names are
shown through the labels it gave (`_labels`), in English and in Chinese. Drawn as the results
panel draws them (no torch: the figures are the plain dicts a runner sends)."""

from __future__ import annotations

from typing import Iterator

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tutor import i18n
from tutor.cli.check import summary_figures
from tutor.runner.protocol import FIGURE_LABELS, Verdict
from tutor.ui.figures import figures_view
from tutor.ui.widgets.memory_plot import MemoryPlot, series
from tutor.ui.widgets.results import ResultsPanel

from .helpers import plain, text_of

# What memory-checkpoint reports, as a checker writes it in each language: its step against the
# plain step (not the reference), and a memory figure of the two ways of running one model.
SIDES = {
    "en": ("your checkpointed step", "the plain step", "compiled", "eager"),
    "zh": ("你做检查点的训练步", "不做检查点的训练步", "编译后", "eager 模式"),
}
LABELS = {
    "en": ("peak memory of one step", "activations: yours 1.420 MiB, the reference's 1.420 MiB", "graphs compiled"),
    "zh": ("一个训练步的峰值内存", "激活值：你的 1.420 MiB，参考答案的 1.420 MiB", "编译出的图"),
}


def figures(lang: str) -> dict[str, object]:
    mine_step, plain_step, compiled, eager = SIDES[lang]
    peak, activations, graphs = LABELS[lang]
    return {
        "time": {
            "learner_s": 13.66e-3,
            "reference_s": 6.92e-3,
            "noisy": False,
            "compares": "your checkpointed step vs the plain step",
            "sides": [mine_step, plain_step],
        },
        "step_memory": {
            "learner_bytes": 3 * 2**20,
            "reference_bytes": 2 * 2**20,
            "compares": "compiled vs eager",
            "sides": [compiled, eager],
            "timeline": {"learner": [[0.0, 0], [0.002, 3 * 2**20]], "reference": [[0.0, 0], [0.001, 2 * 2**20]]},
        },
        "activation_peak_MiB": {"yours": 1.42, "reference": 1.42},
        "graphs": 3,
        FIGURE_LABELS: {"step_memory": peak, "activation_peak_MiB": activations, "graphs": graphs},
    }


@pytest.fixture(params=["en", "zh"])
def lang(request: pytest.FixtureRequest) -> Iterator[str]:
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language("en")


def rows(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_time_and_memory_rows_are_named_by_their_sides(lang: str) -> None:
    mine_step, plain_step, compiled, eager = SIDES[lang]
    lines = rows(plain(figures_view(figures(lang)), 120))
    # each row starts with its side's name, then the value (the names padded to one width)
    assert any(line.startswith(f"{mine_step} 13.66 ms") for line in lines), lines
    assert any(line.startswith(f"{plain_step} 6.92 ms") for line in lines), lines
    assert any(line.startswith(f"{compiled} 3.0 MiB") for line in lines), lines
    assert any(line.startswith(f"{eager} 2.0 MiB") for line in lines), lines
    text = "\n".join(lines)
    if lang == "en":
        assert "speedup 0.51× (the plain step ÷ your checkpointed step): your checkpointed step is slower" in text
        assert "compiled uses 1.50× the peak memory of eager" in text
        assert "yours" not in text.replace("yours 1.420", "") and "ref " not in text
    else:
        assert f"加速比 0.51×（{plain_step} ÷ {mine_step}）：{mine_step}更慢" in text
        # a side name in Latin letters keeps its half-width space beside the Chinese words
        assert f"{compiled}的峰值内存是 {eager}的 1.50×" in text
        assert "你的 " not in text.replace("你的 1.420", "") and "参考 " not in text


def test_a_latin_side_name_is_spaced_from_the_chinese_around_it() -> None:
    i18n.set_language("zh")
    try:
        timing = {"learner_s": 1e-3, "reference_s": 2e-3, "noisy": False, "sides": ["int8 图", "fp32"]}
        text = " ".join(plain(figures_view({"t": timing}), 120).split())
        assert "加速比 2.00×（fp32 ÷ int8 图）：int8 图更快" in text
        timing["sides"] = ["fp32", "int8 图"]
        assert "：fp32 更快" in " ".join(plain(figures_view({"t": timing}), 120).split())
    finally:
        i18n.set_language("en")


def test_labels_stand_in_for_the_figure_names(lang: str) -> None:
    peak, activations, graphs = LABELS[lang]
    text = "\n".join(rows(plain(figures_view(figures(lang)), 120)))
    assert f"{peak} · compiled vs eager" in text  # the heading: the label, then what it compares
    assert activations in text.splitlines()  # a labelled dict shows its label alone, numbers written in
    assert f"{graphs} 3" in text  # a labelled number: the label, then the number
    assert "activation peak MiB" not in text and "step memory" not in text and "_labels" not in text
    unlabelled = {k: v for k, v in figures(lang).items() if k != FIGURE_LABELS}
    assert "activation peak MiB yours 1.42, reference 1.42" in "\n".join(rows(plain(figures_view(unlabelled), 120)))


def test_the_memory_plot_names_its_lines_by_the_sides(lang: str) -> None:
    _mine, _plain, compiled, eager = SIDES[lang]
    lines, _t, _m = series(figures(lang)["step_memory"])  # type: ignore[arg-type]
    assert [line[0] for line in lines] == [compiled, eager]
    plain_figure = {"learner_bytes": 1, "reference_bytes": 1, "timeline": {"learner": [[0.0, 1]]}}
    assert series(plain_figure)[0][0][0] == ("yours" if lang == "en" else "你的")


def test_the_cli_table_names_the_sides_too(lang: str) -> None:
    mine_step, plain_step, compiled, eager = SIDES[lang]
    time_col, _speed, mem_col = summary_figures({"time": figures(lang)["time"], "memory": figures(lang)["step_memory"]})
    vs = " vs " if lang == "en" else " / "
    assert time_col == f"{mine_step} 13.66 ms{vs}{plain_step} 6.92 ms"
    assert mem_col == f"{compiled} 3.0 MiB{vs}{eager} 2.0 MiB"


async def test_the_results_panel_shows_sides_and_labels_in_both_languages() -> None:
    class Panel(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultsPanel(id="results")

    try:
        for lang in ("en", "zh"):
            i18n.set_language(lang)
            mine_step, plain_step, compiled, eager = SIDES[lang]
            app = Panel()
            async with app.run_test(size=(100, 50)) as pilot:
                panel = app.query_one(ResultsPanel)
                panel.show_verdict(Verdict(status="passed", reason="ok", figures=figures(lang)), "memory-checkpoint")
                await pilot.pause()
                body = "\n".join(rows(text_of(app.query_one("#results-body", Static), 100)))
                for side, value in ((mine_step, "13.66 ms"), (plain_step, "6.92 ms"), (compiled, "3.0 MiB")):
                    assert f"{side} {value}" in body, (lang, body)
                assert f"{eager} 2.0 MiB" in body and LABELS[lang][1] in body
                plot = app.query_one(MemoryPlot)
                assert plot.label == LABELS[lang][0]  # the plot's title names the figure as its label does
                drawn = str(plot.render())
                assert compiled in drawn and eager in drawn
    finally:
        i18n.set_language("en")
