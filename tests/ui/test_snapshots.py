"""SVG snapshots (pytest-textual-snapshot). Update with: pytest tests/ui --snapshot-update

Deterministic: the fixed test course, a fresh home, no clock, no cursor blink, verdicts
injected straight into the results panel, and no syntax highlighting in the editor (so the
images do not depend on whether tree-sitter is installed).
"""

from __future__ import annotations

import pytest

from tutor.runner.protocol import Verdict
from tutor.ui.screens.main import MainScreen
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.results import ResultsPanel

PASS = Verdict(status="passed", reason="all checks passed", figures={
    "time": {"learner_s": 1.2e-5, "reference_s": 1.0e-5, "speedup": 0.83, "noisy": True},
    "memory": {"learner_bytes": 262144, "reference_bytes": 131072},
    "build_s": 12.25}, output="", duration_s=3.25)
FAIL = Verdict(status="failed", reason="gradient of x differs from torch.sigmoid's",
               details=["shape (32, 10): 3 of 320 elements differ, largest by 0.25 at [4, 7]"],
               output="hello from your code\n", duration_s=2.5)


@pytest.fixture(autouse=True)
def plain_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CodeEditor, "LANGUAGE", None)


async def _steady(pilot) -> None:
    """Wait until the main screen has opened its step and the guide's Markdown has mounted
    (both asynchronous: run_before starts before the first paint), then pin focus and cursor."""
    app = pilot.app
    for _ in range(500):
        main = app.screen_stack[0] if app.screen_stack else None
        if isinstance(main, MainScreen) and main.step is not None and main.query("#guide > *"):
            break
        await pilot.pause(0.01)
    else:
        raise AssertionError("the main screen did not open")
    for editor in main.query(CodeEditor):
        editor.cursor_blink = False
    if main.exercise is not None:
        main.query_one("#editor", CodeEditor).focus()
    await pilot.pause()
    await pilot.pause()


def _inject(verdict: Verdict):
    async def run_before(pilot) -> None:
        await _steady(pilot)
        main = pilot.app.main
        main.query_one(ResultsPanel).show_verdict(verdict, main.exercise.title,
                                                  "Ctrl+N: next step." if verdict.passed else "")
    return run_before


def test_main_screen(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(120, 36), run_before=_steady)


def test_read_step(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="why"), terminal_size=(120, 36), run_before=_steady)


def test_results_after_pass(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(120, 40), run_before=_inject(PASS))


def test_results_after_fail(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(120, 40), run_before=_inject(FAIL))


def test_help_screen(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(100, 40), press=["f1"],
                        run_before=_steady)


def test_80x24(snap_compare, make_app) -> None:
    assert snap_compare(make_app(step_id="sigmoid"), terminal_size=(80, 24), run_before=_inject(PASS))
