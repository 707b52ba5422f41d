"""The app's second pass, driven as a learner would: keys, panels, layout, figures, restarts."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.progress import Progress
from tutor.runner.protocol import Verdict
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.main import MainScreen
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.hints import HintPanel
from tutor.ui.widgets.results import ResultsPanel

from support.courses import SOLUTION
from support.fakes import FakeRunner

from .helpers import text_of, wait_for

REPO = Path(__file__).resolve().parents[2]
LONG_FAIL = Verdict(
    status="failed",
    reason="gradient of x differs from torch.sigmoid's",
    details=[f"detail line {i}" for i in range(6)],
    output="".join(f"output line {i}\n" for i in range(60)),
    duration_s=1.0,
)


def footer_keys(app) -> list[str]:
    from tutor.ui.widgets.keybar import KeyBar

    return [binding.description for _, binding in app.screen.query_one(KeyBar).shown]


async def test_esc_in_the_editor_keeps_typing_working(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        await pilot.press("escape", "escape", *"ok")
        assert app.focused is editor and editor.text.startswith("ok")
        # from the guide (clicked or focused), typing still lands in the code
        app.main.query_one("#guide-scroll").focus()
        await pilot.pause()
        await pilot.press(*"!")
        assert app.focused is editor and editor.text.startswith("ok!")
        await pilot.press("end", "tab")  # keys and Tab (a hint, in a line of code) still work
        assert app.main.query_one(HintPanel).open


async def test_esc_closes_the_newest_panel_and_f7_brings_them_back(make_app) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([LONG_FAIL]))
    async with app.run_test(size=(120, 36)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        hints, results = app.main.query_one(HintPanel), app.main.query_one(ResultsPanel)
        await pilot.press("end", "tab")  # at the end of a line of code: a hint
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: results.verdict is not None)
        assert hints.display and results.display
        await pilot.press("escape")  # the newest: results
        assert not results.display and hints.display and app.focused is editor
        await pilot.press("escape")
        assert not hints.display and app.focused is editor
        await pilot.press("f7")
        assert hints.display and results.display


@pytest.mark.parametrize("size,lines", [((120, 36), 12), ((80, 24), 8)])
async def test_panels_leave_the_editor_its_lines_and_scroll_from_the_keyboard(make_app, size, lines) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([LONG_FAIL]))
    async with app.run_test(size=size) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        editor.move_cursor((editor.document.line_count - 1, 0))  # the last line, at the bottom
        await pilot.press("tab", "tab", "tab")  # all three hints
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        await pilot.pause()
        assert results.display and app.main.query_one(HintPanel).display
        assert editor.content_region.height >= lines
        assert editor.content_region.contains(*editor.cursor_screen_offset)  # cursor in view
        assert results.max_scroll_y > 0  # 60 lines of output do not fit: it scrolls
        await pilot.press("alt+down")
        assert results.scroll_y > 0
        await pilot.press("alt+up")
        assert results.scroll_y == 0
        assert app.focused is editor


async def test_a_step_title_on_two_rows_still_leaves_the_editor_its_lines(
    make_app, request: pytest.FixtureRequest
) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([LONG_FAIL]))
    async with app.run_test(size=(80, 24)) as pilot:
        # A long title (real ones reach 90 columns with the id) wraps at 80 columns. The course
        # is shared by the session's tests: the title goes back when this test ends.
        step, title = app.main.step, app.main.step.title
        object.__setattr__(step, "title", "A sigmoid with a title long enough to wrap " * 2)
        request.addfinalizer(lambda: object.__setattr__(step, "title", title))
        app.main.refresh_status()
        await pilot.pause()
        assert app.main.query_one("#step-title").size.height == 2
        editor = app.main.query_one("#editor", CodeEditor)
        editor.move_cursor((editor.document.line_count - 1, 0))
        await pilot.press("tab", "tab", "tab")  # all three hints
        assert app.main.query_one(HintPanel).display
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.main.query_one(ResultsPanel).verdict is not None)
        await pilot.pause()
        assert app.main.query_one("#step-title").size.height == 2
        assert editor.content_region.height >= 8


async def test_tab_with_a_selection_or_in_indentation_still_indents(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = next(i for i, line in enumerate(editor.text.splitlines()) if "def forward" in line)
        editor.select_line(row)
        editor.selection = type(editor.selection)((row, 0), (row + 1, 3))
        await pilot.press("tab")
        assert editor.document[row].startswith("        def forward")
        assert Progress(home).exercise("sigmoid").hints_used == 0


async def test_ctrl_a_selects_everything(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        await pilot.press("ctrl+a")
        assert editor.selected_text == editor.text


async def test_f3_toggles_soft_wrap_and_the_view_never_stays_sideways(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(80, 24)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        assert editor.soft_wrap  # long stub lines wrap at 80 columns
        await pilot.press("f3")
        assert not editor.soft_wrap
        editor.move_cursor((0, 0))
        await pilot.press("end")  # the long docstring line: scrolled sideways to its end
        await pilot.pause()
        assert editor.scroll_x > 0
        await pilot.press("down")  # a short (empty) line: back to the left edge
        await pilot.pause()
        await pilot.pause()
        assert editor.scroll_x == 0


async def test_f9_after_a_pass_shows_the_diff_without_the_hint_gate(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([Verdict(status="passed")]))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f9")  # not passed, no hints used: refused
        assert isinstance(app.screen, MainScreen)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: Progress(home).exercise("sigmoid").status == "passed")
        await pilot.press("f9")
        assert isinstance(app.screen, SolutionScreen)  # no question, no hints spent
        assert Progress(home).exercise("sigmoid").hints_used == 0
        diff = text_of(app.screen.query_one("#solution-diff"), width=160)
        assert "ctx.save_for_backward" in diff


async def test_the_cursor_position_survives_a_restart(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        editor.move_cursor((14, 8))
        await pilot.press("x")
        await pilot.press("ctrl+q")
    again = make_app()
    async with again.run_test() as pilot:
        await pilot.pause()
        editor = again.main.query_one("#editor", CodeEditor)
        assert editor.cursor_location == (14, 9)
        assert editor.document[14][8] == "x"


async def test_zoom_and_split_are_remembered(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(120, 36)) as pilot:
        main = app.main
        before = main.query_one("#guide-pane").region.width
        await pilot.press("alt+shift+right")  # a wider guide
        await pilot.pause()
        assert main.query_one("#guide-pane").region.width > before
        await pilot.press("f4")  # the guide, full width
        await pilot.pause()
        assert not main.query_one("#work-pane").display
        assert main.query_one("#guide-pane").region.width == 120
        await pilot.press("f4")  # the work, full width
        await pilot.pause()
        assert not main.query_one("#guide-pane").display
        assert main.query_one("#editor").region.width == 120
        await pilot.press("ctrl+q")
    again = make_app()
    async with again.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert again.main.has_class("-zoom-work") and not again.main.query_one("#guide-pane").display
        await pilot.press("f4")
        await pilot.pause()
        assert again.main.query_one("#guide-pane").region.width > before


@pytest.mark.parametrize(
    "step_id,shown,hidden",
    [
        ("why", ["Next", "Prev", "Steps", "Chapters", "Help", "Quit"], ["Check", "Solution", "Hint"]),
        ("sigmoid", ["Hint", "Check", "Next", "Solution", "Zoom", "Help", "Quit"], ["Chapters", "Run"]),
    ],
)
async def test_the_footer_fits_80_columns_with_help_and_quit(make_app, step_id, shown, hidden) -> None:
    app = make_app(step_id=step_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.pause()
        keys = footer_keys(app)
        for want in shown:
            assert want in keys, (want, keys)
        for unwanted in hidden:
            assert unwanted not in keys, (unwanted, keys)
        from tutor.ui.widgets.keybar import KeyBar

        bar = app.screen.query_one(KeyBar)
        assert bar.region.width == 80 and text_of(bar).rstrip().endswith("Quit")  # nothing cut
        assert len(text_of(bar).rstrip()) <= 80


async def test_learner_text_is_shown_as_text_not_markup(make_app) -> None:
    verdict = Verdict(
        status="failed",
        reason="[bold red]expected[/] 1, got 2",
        details=["line with [link=http://x]markup[/link]"],
        output="\x1b[2Jcleared?\x1b]52;c;Zm9v\x07 and [b]bold[/b]\n",
    )
    app = make_app(step_id="sigmoid", runner=FakeRunner([verdict]))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        body = text_of(results.query_one("#results-body"))
        assert "[bold red]expected[/] 1, got 2" in body
        assert "[link=http://x]markup[/link]" in body
        assert "cleared? and [b]bold[/b]" in body and "\x1b" not in body


async def test_header_counts_the_chapter_and_the_picker_the_course(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid", runner=FakeRunner([Verdict(status="passed")]))
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.sub_title == "0/1 exercises passed"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.sub_title == "1/1 exercises passed")
        assert "sigmoid" in str(app.main.query_one("#navigator").prompt(2))
        await pilot.press("ctrl+o")
        assert "1/2 exercises passed in the course" in text_of(app.screen.query_one(".dialog-title"))


@pytest.mark.slow
async def test_real_runner_pass_then_f9_and_the_figures_agree(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid", warm_runner=True, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        editor.load_text(SOLUTION)  # as if pasted: the check saves it first
        await pilot.press("f5")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None, timeout=240)
        assert results.verdict.status == "passed", results.verdict
        assert app.sub_title == "1/1 exercises passed"
        await pilot.press("f9")
        assert isinstance(app.screen, SolutionScreen) and not isinstance(app.screen, ConfirmScreen)


def _module_imports(path: Path, package_root: Path) -> set[str]:
    """Modules `path` imports at import time (not inside functions or TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
            if isinstance(sub, ast.ImportFrom) and sub.module:
                found.add(sub.module)
            elif isinstance(sub, ast.Import):
                found.update(a.name for a in sub.names)
        if isinstance(node, ast.ClassDef):  # class bodies run at import; methods do not
            for sub in node.body:
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    found.add(getattr(sub, "module", "") or "")
    return {m for m in found if m.startswith("tutor.ui")}


def test_no_import_circle_inside_tutor_ui() -> None:
    root = REPO / "tutor" / "ui"
    graph = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = _module_imports(path, root)
    assert "tutor.ui.app" not in set().union(*(deps for mod, deps in graph.items() if mod != "tutor.ui.app"))

    def visit(mod: str, stack: list[str]) -> None:
        for dep in graph.get(mod, ()):
            assert dep not in stack, " -> ".join(stack + [dep])
            visit(dep, stack + [dep])

    for mod in graph:
        visit(mod, [mod])


def test_cli_hint_and_reset_default_to_the_current_exercise(home: Path, course_root: Path) -> None:
    Progress(home).set_position(2, "sigmoid")
    env = {**os.environ, "TUTOR_HOME": str(home), "PYTHONPATH": str(REPO), "TUTOR_COURSE": str(course_root)}
    hint = subprocess.run(
        [sys.executable, "-m", "tutor", "hint"], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert hint.returncode == 0, hint.stderr
    assert "sigmoid" in hint.stdout.splitlines()[0] and "hint 1/" in hint.stdout
    assert Progress(home).exercise("sigmoid").hints_used == 1
    ws = home / "workspace" / "02-custom-autograd" / "sigmoid.py"
    ws.parent.mkdir(parents=True, exist_ok=True)
    ws.write_text("# mine\n")
    reset = subprocess.run(
        [sys.executable, "-m", "tutor", "reset"], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert reset.returncode == 0, reset.stderr
    assert "sigmoid" in reset.stdout and not ws.read_text().startswith("# mine")


async def test_a_memory_timeline_is_drawn_under_its_figure(make_app) -> None:
    """The results panel's hook for tutor/ui/widgets/memory_plot.py (another module's widget)."""
    timeline = {
        "learner": [[0.0, 0], [0.1, 4 << 20], [0.2, 1 << 20]],
        "reference": [[0.0, 0], [0.1, 2 << 20], [0.2, 1 << 20]],
    }
    verdict = Verdict(
        status="passed",
        figures={
            "peak_memory": {
                "learner_bytes": 4 << 20,
                "reference_bytes": 2 << 20,
                "compares": "yours vs the reference solution",
                "timeline": timeline,
            }
        },
    )
    app = make_app(step_id="sigmoid", runner=FakeRunner([verdict]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        await pilot.pause()
        assert "4.0 MiB" in text_of(results.query_one("#results-body"))
        plots = results.query("#results-plots > *")
        try:
            from tutor.ui.widgets.memory_plot import MemoryPlot
        except ImportError:  # the plot widget is optional: the numbers are always there
            assert len(plots) == 0
        else:
            assert len(plots) == 1 and isinstance(plots.first(), MemoryPlot)


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_opening_or_filling_a_panel_keeps_the_cursor_line_in_view(make_app, size) -> None:
    # Issue 27: after Tab on line 14 the editor showed lines 1-12, and after Ctrl+R the
    # cursor's line sat under the results panel.
    app = make_app(step_id="sigmoid", runner=FakeRunner([LONG_FAIL]))
    async with app.run_test(size=size) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = min(14, editor.document.line_count - 1)
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.pause()
        assert editor.content_region.contains(*editor.cursor_screen_offset)
        await pilot.press("tab")  # a hint: the hint panel opens under the editor
        await pilot.pause()
        assert app.main.query_one(HintPanel).open
        assert editor.content_region.contains(*editor.cursor_screen_offset), "hidden by the hint panel"
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        await pilot.pause()
        assert editor.content_region.contains(*editor.cursor_screen_offset), "hidden by the results panel"


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 36)], ids=["80x24", "100x30", "120x36"])
async def test_f2_on_an_exercise_keeps_the_editor_inside_the_screen(make_app, size) -> None:
    """Issue 27 #6: from the chapter's first step, Ctrl+N to the exercise, then F2: the
    navigator comes in and the editor keeps its right border on the screen; where three panes
    cannot fit (80 columns) the navigator takes the guide's place until F2 hides it again."""
    app = make_app(step_id="why")
    async with app.run_test(size=size) as pilot:
        main = app.main
        await pilot.press("ctrl+n", "ctrl+n")
        await wait_for(pilot, lambda: main.step is not None and main.step.id == "sigmoid")
        editor = main.query_one("#editor", CodeEditor)
        guide = main.query_one("#guide-pane")
        before = editor.region
        await pilot.press("f2")
        await pilot.pause()
        nav = main.query_one("#navigator")
        assert nav.display and nav.region.width > 0 and app.focused is nav
        width = size[0]
        assert editor.region.right <= width and editor.region.width >= 40  # border and code in view
        assert nav.region.right <= editor.region.x
        if width < 100:
            assert not guide.display  # the navigator stands in for the guide
        else:
            assert guide.display and nav.region.right <= guide.region.x < guide.region.right <= editor.region.x
        await pilot.press("f2")
        await pilot.pause()
        assert not nav.display and guide.display and editor.region == before
        assert app.focused is editor


async def test_the_picker_takes_a_typed_number_and_a_chapter_opens_where_it_was_left(make_app, home: Path) -> None:
    """Issue 27 #9: digits in the chapter picker go to that chapter; a chapter opened again
    (picker or `tutor start chapter N`) opens at the step last visited in it."""
    app = make_app(chapter=2, step_id="why")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+n", "ctrl+n")
        await wait_for(pilot, lambda: app.main.step.id == "sigmoid")
        await pilot.press("ctrl+o")
        await pilot.pause()
        chooser = app.screen.query_one("#chapter-list")
        assert chooser.highlighted == 0
        await pilot.press("3")
        assert chooser.highlighted == 1
        await pilot.press("2", "3")  # "23" is no chapter: starts over at 3
        assert chooser.highlighted == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.chapter.number == 3)
        await pilot.press("ctrl+o", "2", "enter")
        await wait_for(pilot, lambda: app.main.chapter.number == 2)
        assert app.main.step.id == "sigmoid"  # where chapter 2 was left, not its first step
    assert Progress(home).chapter_position(2) == "sigmoid"
    assert Progress(home).chapter_position(3) == "intro"
