"""Opening chapters, navigating, resizing, help and commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from textual.widgets import OptionList

from tutor.progress import Progress
from tutor.ui.screens.chapters import ChapterPicker
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.main import MainScreen
from tutor.ui.widgets.navigator import StepNavigator

from support.courses import build_course
from tutor.ui.widgets.guide import GuideView

from support.fakes import FakeRunner

from .helpers import keys_for, text_of

REPO = Path(__file__).resolve().parents[2]


def test_app_never_imports_torch(tmp_path: Path) -> None:
    # A fresh process: the test session itself may have imported torch elsewhere.
    build_course(tmp_path / "course")
    script = f"""
import asyncio, sys
from pathlib import Path
from tutor.course import load_course
from tutor.ui.app import TutorApp
root = Path({str(tmp_path / "course")!r})
course = load_course(root / "lessons", root / "solutions")
async def main():
    app = TutorApp(course, Path({str(tmp_path / "home")!r}), 2, "sigmoid", warm_runner=False)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+n", "alt+left", "f1")
        await pilot.pause()
    app.close_resources()
asyncio.run(main())
print("torch" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


async def test_open_chapter_shows_first_step_and_header(make_app, home: Path) -> None:
    app = make_app(chapter=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        main = app.main
        assert main.step is not None and main.step.id == "why"
        assert app.title == "Ch 2/3 · Custom autograd Functions"
        assert app.sub_title == "0/1 exercises passed"  # this chapter's, not the course's
        nav = app.query_one(StepNavigator)
        assert nav.entry_count == 4 and nav.highlighted == 0
        # a reading step: navigator beside the guide, no work pane, the guide takes the rest
        assert main.has_class("-read") and nav.display
        assert not main.query_one("#work-pane").display
        guide = main.query_one("#guide-pane").region
        assert guide.width == 120 - nav.region.width
        assert "Why write your own Function" in main.query_one("#guide", GuideView).source
    assert Progress(home).last_position() == (2, "why")


async def test_resumes_at_saved_position(make_app, home: Path) -> None:
    Progress(home).set_position(2, "sigmoid")
    app = make_app(chapter=2)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.main.step.id == "sigmoid"
        assert app.main.query_one("#work").current == "editor"
        assert app.focused is app.main.query_one("#editor")


async def test_navigation_saves_position_and_crosses_chapters(make_app, home: Path) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+n")
        assert app.main.step.id == "recap"
        assert Progress(home).last_position() == (2, "recap")
        await pilot.press("ctrl+n")  # past the chapter's end: chapter 3
        assert (app.main.chapter.number, app.main.step.id) == (3, "intro")
        assert app.title.startswith("Ch 3/3 · Custom C++ and CUDA operators")
        await pilot.press("alt+left")
        assert (app.main.chapter.number, app.main.step.id) == (2, "recap")
        await pilot.press("alt+left", "alt+left")
        assert app.main.step.id == "first-function"
        # the navigator: choose step 1 with the keyboard
        nav = app.query_one(StepNavigator)
        nav.focus()
        nav.highlighted = 0
        await pilot.press("enter")
        assert app.main.step.id == "why"
    assert Progress(home).last_position() == (2, "why")


async def test_chapter_picker_opens_chapter(make_app, home: Path) -> None:
    app = make_app(chapter=2, step_id="why")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, ChapterPicker)
        chooser = app.screen.query_one("#chapter-list", OptionList)
        assert chooser.highlighted == 0
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert app.main.chapter.number == 3 and app.main.step.id == "intro"
        await pilot.press("ctrl+o", "escape")
        assert isinstance(app.screen, MainScreen) and app.main.chapter.number == 3


async def test_cuda_exercise_is_marked(make_app) -> None:
    app = make_app(chapter=3, step_id="cuda-add")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        nav = app.query_one(StepNavigator)
        assert "⚡" in str(nav.prompt(1))
        assert "needs a CUDA GPU" in text_of(app.main.query_one("#results-banner"))


async def test_exercise_layout_at_140_80_and_60_columns(make_app) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        main = app.main
        nav = main.query_one("#navigator")
        assert main.has_class("-exercise") and not nav.display  # the task gets the room
        guide, work = main.query_one("#guide-pane").region, main.query_one("#work-pane").region
        assert guide.right <= work.x and work.width > guide.width  # side by side
        await pilot.press("f2")  # the steps, on demand
        assert nav.display
        await pilot.press("f2")
        assert not nav.display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert main.has_class("-narrow") and main.has_class("-short")
        editor = main.query_one("#editor")
        assert editor.region.width >= 40 and editor.content_region.height >= 8
        step_line = text_of(main.query_one("#step-title"))
        assert "Step 3/4" in step_line and "Sigmoid that reuses its output" in step_line
        assert "id: sigmoid" in step_line  # what `tutor check ID` takes
        await pilot.resize_terminal(60, 30)
        await pilot.pause()
        assert main.has_class("-tiny")
        guide, work = main.query_one("#guide-pane").region, main.query_one("#work-pane").region
        assert work.y >= guide.bottom  # stacked


async def test_tiny_terminal_shows_one_clear_message_and_keeps_the_code(make_app) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        main = app.main
        editor = main.query_one("#editor")
        editor.insert("# still here\n", (0, 0))
        await pilot.resize_terminal(40, 10)
        await pilot.pause()
        assert main.has_class("-too-small")
        message = text_of(main.query_one("#too-small"))
        assert "Terminal too small (40x10)" in message and "at least 50x14" in message
        assert not main.query_one("#body").display
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert not main.has_class("-too-small") and main.query_one("#body").display
        assert editor.text.startswith("# still here\n")


async def test_help_lists_every_binding(make_app) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        text = text_of(app.screen.query_one("#help-body"))
        for label in (
            "Ctrl+R / F5",
            "Ctrl+N / Alt+→",
            "Alt+←",
            "Ctrl+O",
            "F8",
            "F9",
            "F1",
            "Tab",
            "Shift+Tab",
            "Ctrl+Q",
            "Ctrl+P",
            "leading whitespace",
        ):
            assert label in text, label
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_bindings_have_ids_and_palette_commands(make_app) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.pause()
        for b in app.all_bindings():
            assert b.id and b.description, b
        titles = [c.title for c in app.get_system_commands(app.main)]
        for want in ("Check", "Next", "Prev", "Chapters", "Reset", "Solution", "Help", "Hint", "Quit"):
            assert any(t.startswith(want) for t in titles), want
        # none of Textual's generic entries (issue 27 #9)
        for generic in ("Theme", "Screenshot", "Maximize", "Keys", "Minimize"):
            assert not any(t.startswith(generic) for t in titles), generic
        # through the palette, as a learner would
        await pilot.press("ctrl+p", *"Next (ctrl", "enter")
        await pilot.pause()
        assert app.main.step.id == "recap"


async def test_quit_saves_and_exits(make_app, home: Path) -> None:
    app = make_app(chapter=2, step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.press("x", "y", "z")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
    assert (home / "workspace" / "02-custom-autograd" / "sigmoid.py").read_text().startswith("xyz")


async def test_passage_typed_to_the_end_is_marked_done(make_app, home: Path, course) -> None:
    from tutor.typing_engine import normalize
    from tutor.ui.widgets.typealong import TypeAlong

    app = make_app(step_id="first-function")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.main.query_one("#work").current == "typing-area"
        typealong = app.main.query_one("#typing-area").query_one(TypeAlong)
        assert typealong.passage_key == "02-custom-autograd/first-function"
        assert app.focused is typealong
        code = normalize(course.chapter(2).step("first-function").code())
        await pilot.press(*keys_for(code.rstrip("\n") + "\n"))  # typed, key by key
        await pilot.pause()
        assert typealong.session.finished
        assert "✔" in str(app.query_one(StepNavigator).prompt(1))
        assert "02-custom-autograd/first-function" in app.progress.passages_done()
        from tutor.ui.widgets.keybar import KeyBar

        footer = " ".join(b.description for _, b in app.screen.query_one(KeyBar).shown)
        assert "Run" in footer and "Check" not in footer  # Ctrl+R now runs what was typed


async def test_finished_passage_runs_with_the_run_key_and_shows_output(make_app, home: Path) -> None:
    from tutor.ui.widgets.typealong import TypeAlong

    runner = FakeRunner()
    app = make_app(step_id="first-function", runner=runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        typealong = app.main.query_one("#typing-area").query_one(TypeAlong)
        await pilot.press("ctrl+r")  # not finished yet: nothing runs
        await pilot.pause()
        assert runner.calls == []
        while not typealong.session.finished:
            typealong.session.hint()  # Tab's next-word hint, until the passage is complete
        await pilot.press("ctrl+r")
        for _ in range(50):
            await pilot.pause(0.02)
            if "hello from the passage" in text_of(app.main.query_one("#results-body")):
                break
        assert runner.calls == [("script", typealong.typed_text)]
        saved = home / "passages" / "02-custom-autograd" / "first-function.py"
        assert saved.read_text() == typealong.typed_text
        assert app.main.query_one("#results").display
        assert "hello from the passage" in text_of(app.main.query_one("#results-body"))
        banner = text_of(app.main.query_one("#results-banner"))
        # a program that ran, not a check that passed (issue 27 #9)
        assert banner.startswith("✔ RAN  A first Function") and "its output is below" in banner
        assert "PASS" not in banner and "well done" not in banner


async def test_navigator_keys_and_click_open_steps(make_app, home: Path) -> None:
    app = make_app(chapter=2, step_id="why")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        nav = app.query_one(StepNavigator)
        nav.focus()
        await pilot.press("end")
        assert nav.highlighted == nav.entry_count - 1
        await pilot.press("enter")  # "recap", a reading step: the navigator stays
        assert app.main.step.id == "recap" and nav.display
        # A click on the last line of entry 0 opens it.
        rows = len(str(nav.prompt(0)).split("\n"))
        await pilot.click(StepNavigator, offset=(6, rows))  # the top border is row 0
        await pilot.pause()
        assert app.main.step.id == "why"
        assert "▶" in str(nav.prompt(0)) and "▶" not in str(nav.prompt(3))
        nav.focus()
        await pilot.press("home", "down", "down")
        assert nav.highlighted == 2
        await pilot.press("pagedown")
        assert nav.highlighted == nav.entry_count - 1
        await pilot.press("up", "enter")
        assert app.main.step.id == "sigmoid"


async def test_garbage_collector_resumes_after_the_first_paint(make_app) -> None:
    import gc

    from tutor import gcpause

    app = make_app(chapter=2, step_id="why")
    thresholds = gc.get_threshold()
    gcpause.pause()  # what the `tutor` command does before its first import
    try:
        assert not gc.isenabled()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert gc.isenabled() and app.main.query_one(GuideView).source
            # Typing allocates thousands of objects a key: young collections wait longer.
            assert gc.get_threshold()[0] == gcpause.YOUNG_THRESHOLD
    finally:
        gcpause.resume()
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert not gcpause.resume()  # resumed once, by the app


def test_commands_other_than_start_run_with_the_collector(tmp_path: Path) -> None:
    script = "import gc, sys; from tutor.launch import main; rc = main(['list']); print(gc.isenabled())"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    env["TUTOR_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("True")


async def test_a_page_seen_before_paints_whole_and_highlighted_from_the_render_cache(make_app) -> None:
    from tutor.ui.widgets import guide

    first = make_app(chapter=2, step_id="why")
    async with first.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = first.main.query_one(GuideView)
        view.highlight_code()  # what the screen does a moment after the first paint
        await pilot.pause()
        drawn = view.render_lines(view.region.reset_offset)
        assert view._page is not None and view._page.complete
    guide._highlight = False  # a new process: nothing highlighted yet
    again = make_app(chapter=2, step_id="why")
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = again.main.query_one(GuideView)
        assert view._page is not None and view._page.complete  # before any highlighting pass
        assert [s.text for s in view.render_lines(view.region.reset_offset)] == [s.text for s in drawn]
