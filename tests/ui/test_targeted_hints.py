"""A failure the course knows (a [[steps.mistakes]] entry) gets its own hint with Tab, before
the generic ladder (issue 15, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course import load_course
from tutor.progress import Progress
from tutor.runner.protocol import Verdict
from tutor.ui.app import TutorApp
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.results import ResultsPanel

from support.courses import build_course
from support.fakes import FakeRunner

from .helpers import text_of, wait_for

MISTAKE = """
[[steps.mistakes]]
when = "saved a tensor that is not its output"
hint = "You saved x. Backward can be written with the output alone: save s = sigmoid(x) instead."
mutant = [["ctx.save_for_backward(s)", "ctx.save_for_backward(x)"]]

"""


def _course(tmp_path: Path):
    root = build_course(tmp_path / "course")
    toml = root / "lessons" / "02-custom-autograd" / "lesson.toml"
    text = toml.read_text()
    at = text.index('[[steps]]\nkind = "read"\nid = "recap"')
    toml.write_text(text[:at] + MISTAKE + text[at:])
    return load_course(root / "lessons", root / "solutions")


async def test_tab_offers_the_hint_for_the_mistake_first(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("TUTOR_HOME", str(home))
    reason = "Sigmoid saved a tensor that is not its output (the input x?)"
    runner = FakeRunner([Verdict(status="failed", reason=reason)])
    app = TutorApp(_course(tmp_path), home, 2, "sigmoid", warm_runner=False, runner_factory=lambda: runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "known mistake" in text_of(app.main.query_one("#results-banner"), width=200))
        editor = app.main.query_one("#editor", CodeEditor)
        empty = next(i for i, line in enumerate(editor.text.split("\n")) if not line.strip())
        editor.move_cursor((empty, 0))
        await pilot.press("tab")
        await pilot.pause()
        shown = text_of(app.main.query_one("#hints-text"), width=200)
        assert "You saved x" in shown and "Hint 1/" not in shown
        assert Progress(home).exercise("sigmoid").hints_used == 0  # not one of the ladder's
        # the offer has been taken: the banner no longer says Tab shows it (issue 27 #9)
        banner = text_of(app.main.query_one("#results-banner"), width=200)
        assert "FAIL" in banner and "known mistake" not in banner
        editor.move_cursor((empty, 0))
        await pilot.press("tab")  # the ladder goes on as before
        await wait_for(pilot, lambda: "Hint 1/3" in text_of(app.main.query_one("#hints-text"), width=200))
        assert Progress(home).exercise("sigmoid").hints_used == 1
    app.close_resources()


async def test_an_unknown_failure_keeps_the_ladder(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("TUTOR_HOME", str(home))
    runner = FakeRunner([Verdict(status="failed", reason="output: max abs error 0.3 at index (1, 2)")])
    app = TutorApp(_course(tmp_path), home, 2, "sigmoid", warm_runner=False, runner_factory=lambda: runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "FAIL" in text_of(app.main.query_one("#results-banner"), width=200))
        assert "known mistake" not in text_of(app.main.query_one("#results-banner"), width=200)
        editor = app.main.query_one("#editor", CodeEditor)
        empty = next(i for i, line in enumerate(editor.text.split("\n")) if not line.strip())
        editor.move_cursor((empty, 0))
        await pilot.press("tab")
        await wait_for(pilot, lambda: "Hint 1/3" in text_of(app.main.query_one("#hints-text"), width=200))
    app.close_resources()


async def test_a_database_damaged_while_the_app_runs_is_reported_at_once(make_app, home: Path) -> None:
    """Garbage written over progress.sqlite3 while the app is open: the next check still works,
    the notice shows at once, and the app keeps going (issue 11, item 9)."""
    import sqlite3

    runner = FakeRunner([Verdict(status="failed", reason="output: wrong")])
    app = make_app(step_id="sigmoid", runner=runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        db = home / "progress.sqlite3"
        app.progress._db.close()
        with open(db, "r+b") as f:
            f.write(b"\x00garbage" * 600)
        app.progress._db = sqlite3.connect(db, isolation_level=None)  # a connection with no cached pages
        app.progress._db.row_factory = sqlite3.Row
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: any("damaged" in str(n.message) for n in app.notices))
        await wait_for(pilot, lambda: "FAIL" in text_of(app.main.query_one("#results-banner"), width=200))
        assert list(home.glob("progress.sqlite3.corrupt-*"))
        assert Progress(home).runs("sigmoid")  # the run after the damage was recorded


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_targeted_hint_title_fits_the_panel_at_80_columns(tmp_path, monkeypatch, lang) -> None:
    from rich.cells import cell_len

    from tutor import i18n
    from tutor.ui.widgets.hints import HintPanel

    home = tmp_path / "home"
    monkeypatch.setenv("TUTOR_HOME", str(home))
    i18n.set_language(lang)
    try:
        reason = "Sigmoid saved a tensor that is not its output (the input x?)"
        runner = FakeRunner([Verdict(status="failed", reason=reason)])
        app = TutorApp(_course(tmp_path), home, 2, "sigmoid", warm_runner=False, runner_factory=lambda: runner)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: app.main.query_one(ResultsPanel).verdict is not None)
            editor = app.main.query_one("#editor", CodeEditor)
            empty = next(i for i, line in enumerate(editor.text.split("\n")) if not line.strip())
            editor.move_cursor((empty, 0))
            await pilot.press("tab")
            await pilot.pause()
            panel = app.main.query_one(HintPanel)
            title = str(panel.border_title)
            assert ("针对错误的提示" if lang == "zh" else "Your mistake") in title
            assert cell_len(title) + 4 <= panel.size.width, (title, panel.size.width)  # corners and a cell each side
        app.close_resources()
    finally:
        i18n.set_language("en")
