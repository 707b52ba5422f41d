"""SVG snapshots (pytest-textual-snapshot). Update with: pytest tests/ui/test_snapshots.py --snapshot-update
and then look at every changed screen as a learner would before accepting it.

Each screen is reached the way a learner reaches it: keys pressed in the app, checks run
through the app's own check path (a canned runner stands in for the torch process, so
verdicts, progress, the header count and the step icons are what the real flow produces).
Deterministic: the fixed test course, a fresh home, no cursor blink, no syntax highlighting
in the editor (so the images do not depend on whether tree-sitter is installed).
"""

from __future__ import annotations

import pytest

from tutor.runner.protocol import Verdict
from tutor.ui.screens.main import MainScreen
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.guide import GuideView
from tutor.ui.widgets.results import ResultsPanel

from support.fakes import FakeRunner

PASS = Verdict(
    status="passed",
    reason="all checks passed",
    figures={
        "time": {
            "learner_s": 1.2e-5,
            "reference_s": 1.0e-5,
            "speedup": 0.83,
            "noisy": False,
            "compares": "yours vs the reference solution",
        },
        "peak_memory": {
            "learner_bytes": 262144,
            "reference_bytes": 131072,
            "compares": "yours vs the reference solution",
        },
        "build_s": 12.25,
    },
    output="",
    duration_s=3.25,
)
FAIL = Verdict(
    status="failed",
    reason="gradient of x differs from torch.sigmoid's",
    details=["shape (32, 10): 3 of 320 elements differ, largest by 0.25 at [4, 7]"],
    output="hello from your code\n",
    duration_s=2.5,
)
MEMORY_PASS = Verdict(
    status="passed",
    reason="all checks passed",
    figures={
        "memory": {
            "learner_bytes": 3 * 2**20,
            "reference_bytes": 2 * 2**20,
            "device": "cpu",
            "timeline": {
                "learner": [[0.0, 0], [0.002, 2**20], [0.004, 3 * 2**20], [0.006, 0]],
                "reference": [[0.0, 0], [0.001, 2 * 2**20], [0.003, 0]],
            },
            "compares": "yours vs the reference solution",
        },
    },
    duration_s=2.0,
)


@pytest.fixture(autouse=True)
def plain_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CodeEditor, "LANGUAGE", None)


async def _steady(pilot) -> None:
    """Wait until the main screen has opened its step (and built its work pane), then pin
    the cursor blink."""
    app = pilot.app
    for _ in range(500):
        main = app.screen_stack[0] if app.screen_stack else None
        if isinstance(main, MainScreen) and main.step is not None and main.work.built:
            break
        await pilot.pause(0.01)
    else:
        raise AssertionError("the main screen did not open")
    for editor in main.query(CodeEditor):
        editor.cursor_blink = False
    main.query_one(GuideView).highlight_code()  # what a learner sees a moment after opening
    await pilot.pause()
    await pilot.pause()


def _hints_and_check(hints: int):
    """On a new empty line in forward's body (where a stuck learner sits): Tab `hints` times,
    then Ctrl+R, then wait for the verdict (the toast that celebrates a pass is left on screen:
    the learner sees it)."""

    async def run_before(pilot) -> None:
        await _steady(pilot)
        main = pilot.app.main
        editor = main.query_one("#editor", CodeEditor)
        row = next(i for i, line in enumerate(editor.text.splitlines()) if "# TODO: compute s" in line)
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press("enter")
        for _ in range(hints):
            await pilot.press("tab")
        await pilot.press("ctrl+r")
        results = main.query_one(ResultsPanel)
        for _ in range(500):
            if results.verdict is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_read_step(snap_compare, make_app, size) -> None:
    assert snap_compare(make_app(step_id="why"), terminal_size=size, run_before=_steady)


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_passage(snap_compare, make_app, size) -> None:
    assert snap_compare(make_app(step_id="first-function"), terminal_size=size, run_before=_steady)


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_exercise_with_hints_and_a_pass(snap_compare, make_app, size) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([PASS]))
    assert snap_compare(app, terminal_size=size, run_before=_hints_and_check(2))


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_exercise_with_hints_and_a_failure(snap_compare, make_app, size) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([FAIL]))
    assert snap_compare(app, terminal_size=size, run_before=_hints_and_check(1))


async def _memory_check_then_passage(pilot) -> None:
    """Issue 27 #1: an exercise's check with a memory chart, then Alt+Left to the passage before
    it and Ctrl+R: the results show the passage's run alone, no chart of the earlier check."""
    await _steady(pilot)
    main = pilot.app.main

    async def verdict_of(step_id: str) -> None:
        for _ in range(500):
            results = main.query(ResultsPanel)
            if main.step is not None and main.step.id == step_id and results and results.first().verdict:
                break
            await pilot.pause(0.01)
        else:
            raise AssertionError(f"no verdict on {step_id}")
        await pilot.pause()
        await pilot.pause()

    await pilot.press("ctrl+r")
    await verdict_of("sigmoid")
    assert main.query("MemoryPlot"), "the exercise's check drew its memory chart"
    await pilot.press("alt+left")
    for _ in range(500):
        if main.step is not None and main.step.id == "first-function" and main.work.built:
            break
        await pilot.pause(0.01)
    await _steady(pilot)
    from tutor.ui.widgets.typealong import TypeAlong

    typealong = main.query_one("#typing-area").query_one(TypeAlong)
    now = [0.0]
    typealong.session._clock = lambda: now[0]  # a scripted clock: half a second a word
    for _ in range(200):  # Tab types the next word, as a learner who leans on hints would
        if typealong.session.finished:
            break
        now[0] += 0.5
        await pilot.press("tab")
    await pilot.pause()
    await pilot.press("ctrl+r")
    await verdict_of("first-function")
    assert not main.query("MemoryPlot")


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_passage_run_after_a_memory_check(snap_compare, make_app, size) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([MEMORY_PASS]))
    assert snap_compare(app, terminal_size=size, run_before=_memory_check_then_passage)


def test_exercise_fresh(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(120, 36), run_before=_steady)


def test_help_screen(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(100, 40), press=["f1"], run_before=_steady)
