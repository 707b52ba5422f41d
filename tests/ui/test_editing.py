"""Typing, autosave, crash recovery, Tab hints and indentation, reset, disk changes, errors."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tutor.progress import Progress, ProgressError
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.main import MainScreen
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.hints import HintPanel
from tutor.workspace import Workspace, WorkspaceError

from .helpers import text_of, wait_for


def ws_file(home: Path) -> Path:
    return home / "workspace" / "02-custom-autograd" / "sigmoid.py"


def line_of(editor: CodeEditor, needle: str) -> int:
    return next(i for i, line in enumerate(editor.text.splitlines()) if needle in line)


async def test_exercise_opens_workspace_copy_of_stub(make_app, home: Path, course) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.pause()
        editor = app.main.query_one("#editor", CodeEditor)
        stub = course.exercise("sigmoid").stub.read_text()
        assert editor.text == stub == ws_file(home).read_text()
        assert editor.show_line_numbers and not editor.read_only and app.focused is editor


async def test_autosave_after_typing_stops(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        t0 = time.monotonic()
        await pilot.press("#")
        if time.monotonic() - t0 < 0.3:  # (a loaded machine may take longer for one key)
            assert not ws_file(home).read_text().startswith("#")  # not on every keystroke
        await pilot.press(*" mine", "enter")
        await wait_for(pilot, lambda: ws_file(home).read_text().startswith("# mine\n"))


async def test_autosave_at_most_a_second_after_first_keystroke(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        start = time.monotonic()
        while time.monotonic() - start < 1.6:  # typing non-stop, never 0.5 s quiet
            await pilot.press("x")
            await pilot.pause(0.1)
        # saved while typing went on (the exact timing is the Debouncer's unit test)
        await wait_for(pilot, lambda: ws_file(home).read_text().startswith("x"), timeout=3)


def test_work_survives_a_killed_process(tmp_path: Path) -> None:
    """SIGKILL the app mid-session (no quit, no cleanup): what autosave wrote is on disk."""
    import signal
    import subprocess
    import sys

    from support.courses import build_course

    root = build_course(tmp_path / "course")
    home = tmp_path / "home"
    ready = tmp_path / "ready"
    script = f"""
import asyncio, time
from pathlib import Path
from tutor.course import load_course
from tutor.ui.app import TutorApp
root = Path({str(root)!r})
app = TutorApp(load_course(root / "lessons", root / "solutions"), Path({str(home)!r}), 2, "sigmoid",
               warm_runner=False)
async def main():
    async with app.run_test() as pilot:
        await pilot.press(*"# survived")
        f = Path({str(home)!r}) / "workspace" / "02-custom-autograd" / "sigmoid.py"
        while not f.read_text().startswith("# survived"):
            await pilot.pause(0.05)
        await pilot.press(*" and more")  # typed, not yet saved when the kill comes
        Path({str(ready)!r}).write_text("ok")
        await asyncio.sleep(60)
asyncio.run(main())
"""
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2])
    try:
        deadline = time.monotonic() + 90
        while not ready.exists():
            assert proc.poll() is None, "the app exited early"
            assert time.monotonic() < deadline, "the app never got going"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = ws_file(home).read_text()
    assert text.startswith("# survived")
    assert not list(ws_file(home).parent.glob(".*.tmp"))  # no torn temporary file


async def test_step_change_saves_at_once(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.press("a", "ctrl+n")
        assert ws_file(home).read_text().startswith("a")


async def test_tab_reveals_hints_progressively_and_records_them(make_app, home: Path, course) -> None:
    ex = course.exercise("sigmoid")
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        before = editor.text
        row = line_of(editor, "import torch")
        editor.move_cursor((row, len("import torch")))
        panel = app.main.query_one(HintPanel)
        assert not panel.display
        for n in (1, 2, 3):
            await pilot.press("tab")
            assert Progress(home).exercise("sigmoid").hints_used == n
            shown = text_of(panel.query_one("#hints-text"))
            assert f"Hint {n}/3" in shown and ex.hints[n - 1].replace("*", "").split("`")[0].strip() in shown
        assert panel.display and editor.text == before  # the learner's text is untouched
        await pilot.press("tab")  # after the last hint: offer the solution
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert isinstance(app.screen, MainScreen)
        assert Progress(home).exercise("sigmoid").hints_used == 3
        await pilot.press("f9", "y")
        assert isinstance(app.screen, SolutionScreen)
        diff = text_of(app.screen.query_one("#solution-diff"), width=160)
        assert "ctx.save_for_backward(s)" in diff and "NotImplementedError" in diff
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
    # hints stay revealed in a new session
    again = make_app()
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "Hint 3/3" in text_of(again.main.query_one("#hints-text"))


async def test_tab_on_an_empty_line_gives_a_hint_whose_code_shows_only_there(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = line_of(editor, "# TODO: compute s = torch.sigmoid(x)")
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press("enter")  # a fresh empty line in forward's body: where a stuck learner sits
        indent = editor.document[row + 1]
        before = editor.text
        await pilot.press("tab")  # hint 1 (no code in it)
        assert Progress(home).exercise("sigmoid").hints_used == 1 and editor.text == before
        await pilot.press("tab")  # hint 2: "`s = torch.sigmoid(x)` then ..."
        assert Progress(home).exercise("sigmoid").hints_used == 2
        assert editor.suggestion == "s = torch.sigmoid(x)"  # on the line where Tab was pressed
        await pilot.press("up")  # another line (with code): no ghost
        assert editor.suggestion == ""
        await pilot.press("down", "end")  # back on its line: shown again
        empty = [i for i, line in enumerate(editor.text.splitlines()) if not line.strip()]
        assert editor.cursor_location[0] == row + 1 and editor.suggestion == "s = torch.sigmoid(x)"
        await pilot.press("right")  # → moves; it never inserts the hint
        assert editor.text == before and editor.suggestion == ""
        editor.move_cursor((empty[-1], 0))
        await pilot.press("end")
        assert editor.suggestion == ""  # a different empty line
        editor.move_cursor((row + 1, 0))
        await pilot.press("end")
        assert editor.suggestion == "s = torch.sigmoid(x)"
        await pilot.press("tab")  # the explicit accept key
        assert editor.document[row + 1] == indent + "s = torch.sigmoid(x)"
        assert Progress(home).exercise("sigmoid").hints_used == 2  # accepting is not a hint
        await pilot.press("enter")
        assert editor.suggestion == ""  # accepted once: gone


async def test_hint_code_is_never_offered_at_module_level(make_app, home: Path) -> None:
    # Between the docstring and `import torch` a hint's code would be a stray module-level
    # line: the hint shows in its panel, the editor offers no code to insert.
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = line_of(editor, "import torch")
        editor.move_cursor((row, len("import torch")))
        await pilot.press("enter")
        before = editor.text
        await pilot.press("tab", "tab")  # hint 2 has code: `s = torch.sigmoid(x)`
        assert Progress(home).exercise("sigmoid").hints_used == 2
        assert "torch.sigmoid" in text_of(app.main.query_one("#hints-text"))
        assert editor.suggestion == ""
        await pilot.press("tab")  # no ghost to take: the next hint, nothing inserted
        assert editor.text == before


async def test_solution_key_waits_for_the_hints(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.press("f9")
        assert isinstance(app.screen, MainScreen)
        assert Progress(home).exercise("sigmoid").hints_used == 0


async def test_tab_in_leading_whitespace_indents(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = line_of(editor, "def forward")
        editor.move_cursor((row, 4))
        await pilot.press("tab")
        assert editor.document[row].startswith("        def forward")  # 4 -> 8 spaces
        editor.move_cursor((row, 2))
        await pilot.press("tab")  # to the next tab stop, like other editors
        assert editor.document[row].startswith("          def forward")
        await pilot.press("shift+tab")  # back to the previous tab stop
        assert editor.document[row].startswith("        def forward")
        assert Progress(home).exercise("sigmoid").hints_used == 0
        await pilot.press("shift+tab")
        assert editor.document[row].startswith("    def forward")
        await pilot.press("shift+tab")
        assert editor.document[row].startswith("def forward")


async def test_enter_keeps_indentation(make_app) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        row = line_of(editor, "def forward")
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press("enter", "x")
        assert editor.document[row + 1] == "        x"  # one level deeper after ':'
        await pilot.press("enter", "y")
        assert editor.document[row + 2] == "        y"


async def test_reset_asks_then_restores_stub_with_backup(make_app, home: Path, course) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        await pilot.press(*"# my work", "enter")
        await pilot.press("f8")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert editor.text.startswith("# my work")
        await pilot.press("f8", "y")
        await pilot.pause()
        stub = course.exercise("sigmoid").stub.read_text()
        assert editor.text == stub == ws_file(home).read_text()
        backups = list((home / "backups" / "02-custom-autograd").glob("sigmoid.*.py"))
        assert len(backups) == 1 and backups[0].read_text().startswith("# my work")


async def test_file_changed_on_disk_offers_reload(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.pause()
        path = ws_file(home)
        path.write_text("# from another editor\n")
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert app.main.query_one("#editor", CodeEditor).text == "# from another editor\n"
        # "keep mine": the editor's text goes back to disk
        path.write_text("# changed again\n")
        os.utime(path, ns=(time.time_ns() + 2 * 10**9, time.time_ns() + 2 * 10**9))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: path.read_text() == "# from another editor\n")


async def test_load_from_disk_keeps_the_cursor_where_it_was(make_app, home: Path) -> None:
    """Issue 27 #9: an outside edit reloaded with "Load from disk" leaves the cursor on its
    line (clamped to the new text), not on line 1; the border names the file."""
    app = make_app(step_id="sigmoid")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        editor = app.main.query_one("#editor", CodeEditor)
        assert editor.border_title == "workspace/02-custom-autograd/sigmoid.py"
        editor.move_cursor((14, 4))
        path = ws_file(home)
        path.write_text(editor.text.replace("# TODO", "# DONE", 1))
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert "# DONE" in editor.text and editor.cursor_location == (14, 4)
        path.write_text("# short\n")  # fewer lines than the cursor's row: the last line
        os.utime(path, ns=(time.time_ns() + 2 * 10**9, time.time_ns() + 2 * 10**9))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert editor.text == "# short\n" and editor.cursor_location == (1, 0)


async def test_save_errors_are_one_line_and_keep_the_text(
    make_app, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self, exercise, text):
        raise WorkspaceError(f"cannot save {self.path(exercise)}: No space left on device")

    def no_db(self, *a, **kw):
        raise ProgressError("cannot save progress: disk I/O error")

    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.pause()
        monkeypatch.setattr(Workspace, "write", broken)
        monkeypatch.setattr(Progress, "use_hint", no_db)
        monkeypatch.setattr(Progress, "set_position", no_db)
        await pilot.press(*"# unsaved")
        await wait_for(pilot, lambda: any("No space left on device" in n.message for n in app.notices))
        editor = app.main.query_one("#editor", CodeEditor)
        assert editor.text.startswith("# unsaved")
        assert all("\n" not in n.message for n in app.notices)
        row = line_of(editor, "import torch")
        editor.move_cursor((row, 3))
        await pilot.press("tab")  # the hint still shows, unrecorded
        assert "Hint 1/3" in text_of(app.main.query_one("#hints-text"))
        await pilot.press("ctrl+n")  # the save fails, the step changes, the text is kept
        assert app.main.step.id == "recap"
        await pilot.press("alt+left")
        await pilot.pause()
        assert app.main.step.id == "sigmoid"
        assert editor.text.startswith("# unsaved")
        assert any("disk I/O error" in n.message for n in app.notices)
        monkeypatch.undo()  # the disk has room again
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert ws_file(home).read_text().startswith("# unsaved")


async def test_navigation_waits_while_a_disk_conflict_is_asked(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.press(*"# mine")
        path = ws_file(home)
        path.write_text("# theirs\n")
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        await pilot.press("ctrl+n")  # saving finds the conflict: ask, and stay
        assert isinstance(app.screen, ConfirmScreen) and app.main.step.id == "sigmoid"
        await pilot.press("n")  # keep mine
        await wait_for(pilot, lambda: path.read_text().startswith("# mine"))
        await pilot.press("ctrl+n")
        assert app.main.step.id == "recap"


async def test_unreadable_file_is_shown_read_only_and_never_overwritten(make_app, home: Path) -> None:
    path = ws_file(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe not utf-8 \x80")
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.pause()
        editor = app.main.query_one("#editor", CodeEditor)
        assert editor.read_only
        assert any("cannot open your copy of sigmoid" in n.message for n in app.notices)
        await pilot.press("x", "ctrl+n", "alt+left")
        await pilot.press("ctrl+q")
    assert path.read_bytes() == b"\xff\xfe not utf-8 \x80"


async def test_quit_during_a_disk_conflict_keeps_the_editor_text_aside(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid")
    async with app.run_test() as pilot:
        await pilot.press(*"# mine")
        path = ws_file(home)
        path.write_text("# theirs\n")
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        await pilot.press("ctrl+q")  # the save finds the conflict
        await pilot.pause()
    assert path.read_text() == "# theirs\n"
    aside = list((home / "backups" / "02-custom-autograd").glob("sigmoid.editor-*.py"))
    assert len(aside) == 1 and aside[0].read_text().startswith("# mine")
    assert str(aside[0]) in app.exit_message


async def test_lines_kept_from_earlier_frames_match_a_fresh_drawing() -> None:
    """The editor keeps drawn lines by their content (not redrawn on every key): after resizes,
    typing, new lines (renumbering), deletions, a selection, scrolling, wrap off and a theme change,
    every row on screen is what TextArea would draw from scratch (the snapshot at a size the
    app settles into showed long lines cut, not wrapped, before the wrap was in the key)."""
    from textual.app import App, ComposeResult

    source = "".join(f"def f{i}(x):\n    s = 'text {i}'  # note\n    return x + {i}\n\n" for i in range(40))

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield CodeEditor.for_code(source, id="editor")

    app = One()
    async with app.run_test(size=(60, 20)) as pilot:
        editor = app.query_one(CodeEditor)
        editor.focus()

        async def same_as_fresh(after: str) -> None:
            await pilot.pause()
            for y in range(editor.size.height):
                shown, fresh = editor.render_line(y), editor._render_line(y)
                assert shown == fresh, f"after {after}, row {y}: {shown.text!r} != {fresh.text!r}"

        await pilot.pause()
        await same_as_fresh("opening")
        await pilot.resize_terminal(34, 20)  # long lines wrap: the rows move
        await same_as_fresh("a narrower terminal")
        await pilot.resize_terminal(60, 20)
        await same_as_fresh("a wider terminal")
        editor.move_cursor((5, 4))
        await pilot.press(*"q = (", "enter", *"'open string")
        await same_as_fresh("typing and a new line")
        await pilot.press("backspace", "up", "end", "backspace", "backspace")
        await same_as_fresh("deleting")
        await pilot.press("shift+down", "shift+down", "shift+down")
        await same_as_fresh("a selection")
        await pilot.press("pagedown", "down")
        await same_as_fresh("scrolling")
        await pilot.press("f3")
        await same_as_fresh("wrap off")
        app.theme = "textual-light"
        await same_as_fresh("a theme change")
