"""`tutor watch`, `tutor open`, `tutor path` and the editor configuration in the workspace.

The watch app is driven with Textual's pilot on a temporary TUTOR_HOME while the test writes
the watched file from outside, as the learner's editor would; the real file watcher runs.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from tutor import cli
from tutor.course import Course
from tutor.progress import Progress
from tutor.runner.client import Runner
from tutor.runner.protocol import Verdict
from tutor.workspace import PYRIGHT_CONFIG, VSCODE_SETTINGS, Workspace
from support.fakes import FakeRunner


def by_marker(text: str) -> Verdict:
    if "# right" in text:
        return Verdict(status="passed", reason="all checks passed", duration_s=0.1)
    return Verdict(status="failed", reason="gradient of x: max abs error 3.48", duration_s=0.1)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what or condition}"
        await pilot.pause(0.05)


def banner(app: Any) -> str:
    from textual.widgets import Static

    return str(app.watch_screen.query_one("#results-banner", Static).content)


def make_app(course: Course, home: Path, exercise_id: str, runner: Any) -> Any:
    from tutor.ui.watch.app import WatchApp

    ws = Workspace(home)
    ws.ensure(course)
    return WatchApp(course, home, course.exercise(exercise_id), runner_factory=lambda: runner)


def write(path: Path, text: str) -> None:
    """As an editor that saves by replacing the file (a temp file renamed over it)."""
    tmp = path.with_name(f".{path.name}.swp-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# -- the headline test: the real runner, real files ------------------------------------------------


@pytest.mark.slow
def test_watch_checks_every_save_and_moves_on_after_a_pass(home, course, shared_build_cache):
    """Wrong, then right: the verdicts appear in that order, the pass is recorded in the
    progress store the app and the CLI read, and watching moves on to the next exercise."""
    sigmoid = course.exercise("sigmoid")
    runner = Runner(cache_dir=shared_build_cache, device="cpu")
    app = make_app(course, home, "sigmoid", runner)
    path = Workspace(home).path(sigmoid)
    solution = sigmoid.solution.read_text()
    wrong = solution.replace("return grad_out * s * (1 - s)", "return grad_out * s")
    assert wrong != solution

    async def scenario() -> list[str]:
        seen: list[str] = []
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.watch_screen
            await wait_for(pilot, lambda: "every save is checked" in banner(app), what="the idle note")
            write(path, wrong)
            await wait_for(pilot, lambda: "FAIL" in banner(app), timeout=180, what="FAIL")
            seen.append(banner(app))
            body = str(screen.query_one("#results-body").content.renderables[0])  # the reason
            assert "gradient" in body
            assert app.session.current == sigmoid  # a failure stays on the exercise
            write(path, solution)
            await wait_for(pilot, lambda: "PASS" in banner(app), timeout=180, what="PASS")
            seen.append(banner(app))
            await wait_for(pilot, lambda: app.session.current.id == "leaky-relu", what="moving on")
            title = str(screen.query_one("#watch-title").content)
            assert "Leaky ReLU" in title
            assert screen.history == [("sigmoid", "failed"), ("sigmoid", "passed")]
            await pilot.press("q")
        return seen

    try:
        seen = run(scenario())
    finally:
        app.close_resources()
        runner.close()
    assert "FAIL" in seen[0] and "Sigmoid" in seen[0]
    assert "PASS" in seen[1] and "Next: Leaky ReLU" in seen[1]
    progress = Progress(home)
    assert progress.exercise("sigmoid").status == "passed"
    assert [r.status for r in progress.runs("sigmoid")] == ["passed", "failed"]  # newest first
    assert progress.last_position() == (2, "leaky-relu")  # `tutor check` and the app continue there


# -- watch mode with a fake runner (fast) ------------------------------------------------------------


def test_a_save_during_a_check_cancels_it_and_checks_the_new_text(home, course):
    runner = FakeRunner(verdict_for=by_marker, block_first=True)
    app = make_app(course, home, "sigmoid", runner)
    path = Workspace(home).path(course.exercise("sigmoid"))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            write(path, "# first try\n")
            await wait_for(
                pilot, lambda: len(runner.calls) == 1 and "Checking" in banner(app), what="the first check to start"
            )
            write(path, "# right\n")
            await wait_for(pilot, lambda: "PASS" in banner(app), what="PASS")
            assert runner.cancelled.is_set()
            assert runner.texts == ["# first try\n", "# right\n"]
            # The cancelled run says nothing about the code: not shown, not recorded.
            assert app.watch_screen.history == [("sigmoid", "passed")]
            await pilot.press("q")

    try:
        run(scenario())
    finally:
        app.close_resources()
    assert [r.status for r in Progress(home).runs("sigmoid")] == ["passed"]


def test_saving_unchanged_text_starts_no_check_and_r_rechecks(home, course):
    runner = FakeRunner(verdict_for=by_marker)
    app = make_app(course, home, "sigmoid", runner)
    path = Workspace(home).path(course.exercise("sigmoid"))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            write(path, "# attempt\n")
            await wait_for(pilot, lambda: "FAIL" in banner(app), what="FAIL")
            assert "check 1 at " in banner(app)
            write(path, "# attempt\n")  # an editor saving again without a change
            await pilot.pause(2.5)  # the watcher and the once-a-second look have both seen it
            assert len(runner.calls) == 1
            await pilot.press("r")
            await wait_for(pilot, lambda: len(runner.calls) == 2 and "FAIL" in banner(app), what="re-run")
            # the same verdict again, but it shows that it ran: its number and time (issue 27 #9)
            await wait_for(pilot, lambda: "check 2 at " in banner(app), what="the second check's mark")
            await pilot.press("q")

    try:
        run(scenario())
    finally:
        app.close_resources()


def test_saves_are_checked_once_even_without_change_events(home, course):
    """On a file system that sends no change events (a network mount), the once-a-second look
    at the file still checks every save; with events too, one save is one check."""
    runner = FakeRunner(verdict_for=by_marker)
    app = make_app(course, home, "sigmoid", runner)
    app.watcher.start = lambda: None  # type: ignore[method-assign]  # no events at all
    path = Workspace(home).path(course.exercise("sigmoid"))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            write(path, "# right\n")
            await wait_for(pilot, lambda: "PASS" in banner(app), timeout=10, what="PASS")
            await pilot.press("q")

    try:
        run(scenario())
    finally:
        app.close_resources()
    assert runner.texts == ["# right\n"]

    runner2 = FakeRunner(verdict_for=by_marker)
    app2 = make_app(course, home, "straight-through", runner2)
    path2 = Workspace(home).path(course.exercise("straight-through"))

    async def both() -> None:
        async with app2.run_test(size=(80, 24)) as pilot:
            write(path2, "# attempt\n")
            await wait_for(pilot, lambda: "FAIL" in banner(app2), what="FAIL")
            await pilot.pause(2.5)  # the poll has looked at the file twice since
            await pilot.press("q")

    try:
        run(both())
    finally:
        app2.close_resources()
    assert runner2.texts == ["# attempt\n"]


def test_keys_hint_solution_list_and_moving(home, course):
    sigmoid = course.exercise("sigmoid")
    runner = FakeRunner(verdict_for=by_marker)
    app = make_app(course, home, "sigmoid", runner)

    async def scenario() -> None:
        from textual.widgets import OptionList

        from tutor.ui.screens.solution import SolutionScreen
        from tutor.ui.watch.picker import ExercisePicker

        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.watch_screen
            await pilot.press("s")  # no hint used, not passed: refused with the way forward
            await pilot.pause(0.1)
            assert not isinstance(app.screen, SolutionScreen)
            assert any("after the hints" in str(n.message) for n in app._notifications)
            for _ in sigmoid.hints:
                await pilot.press("h")
            hints = str(screen.query_one("#watch-hints").border_title)
            assert "no more" in hints
            assert Progress(home).exercise("sigmoid").hints_used == len(sigmoid.hints)
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, SolutionScreen), what="the diff")
            await pilot.press("escape")
            await pilot.press("n")
            assert app.session.current.id == "leaky-relu"
            assert Progress(home).last_position() == (2, "leaky-relu")
            await pilot.press("p")
            assert app.session.current.id == "sigmoid"
            await pilot.press("l")
            await wait_for(pilot, lambda: isinstance(app.screen, ExercisePicker), what="the list")
            chooser = app.screen.query_one(OptionList)
            assert chooser.highlighted_option is not None
            assert chooser.highlighted_option.id == "sigmoid"  # opens on the current exercise
            chooser.highlighted = next(
                i for i in range(chooser.option_count) if chooser.get_option_at_index(i).id == "cpp-relu"
            )
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.session.current.id == "cpp-relu", what="the jump")
            assert "cpp_relu.py" in str(screen.query_one("#watch-file").content)
            await pilot.press("q")

    try:
        run(scenario())
    finally:
        app.close_resources()
    assert app.return_code == 0


def test_arriving_shows_the_last_verdict_from_history_or_checks_a_changed_file(home, course):
    sigmoid = course.exercise("sigmoid")
    ws = Workspace(home)
    ws.ensure(course)
    ws.write(sigmoid, "# right\n")
    progress = Progress(home)
    # An earlier `tutor check` (or the app) recorded a pass after the file was saved.
    time.sleep(0.05)
    progress.record_run(
        "sigmoid", "passed", "all checks passed", {"time": {"learner_s": 0.01, "reference_s": 0.02, "speedup": 2.0}}
    )
    runner = FakeRunner(verdict_for=by_marker)
    app = make_app(course, home, "sigmoid", runner)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: "PASS" in banner(app), what="the recorded pass")
            assert "last check" in banner(app)
            assert runner.texts == []  # nothing changed since: no run
            ws.write(course.exercise("leaky-relu"), "# edited in the editor while away\n")
            await pilot.press("n")
            await wait_for(pilot, lambda: "FAIL" in banner(app), what="a check of the changed file")
            assert runner.texts == ["# edited in the editor while away\n"]
            await pilot.press("q")

    try:
        run(scenario())
    finally:
        app.close_resources()


# -- the session and the watcher without a screen ----------------------------------------------------


def test_after_pass_skips_passed_exercises_and_wraps(home, course):
    from tutor.watch_session import WatchSession

    progress = Progress(home)
    ws = Workspace(home)
    session = WatchSession(course, progress, ws, lambda: FakeRunner(verdict_for=by_marker), course.exercise("sigmoid"))
    session.gpus = 0
    for done in ("leaky-relu", "stable-logsumexp"):
        progress.mark_passed(done)
    assert session.after_pass(course.exercise("sigmoid")).id == "straight-through"
    last = course.exercises[-1]
    first_open = session.after_pass(last)
    assert first_open is not None and first_open.id == course.exercises[0].id
    # Exercises this machine cannot run (CUDA ones, here without a GPU) are skipped.
    cuda = [e for e in course.exercises if e.needs.device == "cuda"]
    if cuda:
        before = course.exercises[course.exercises.index(cuda[0]) - 1]
        assert session.after_pass(before) != cuda[0]


def test_hints_are_shared_with_the_cli(home, course, capsys):
    from tutor.watch_session import WatchSession

    assert cli.main(["hint", "sigmoid"]) == 0
    session = WatchSession(
        course, Progress(home), Workspace(home), lambda: FakeRunner(verdict_for=by_marker), course.exercise("sigmoid")
    )
    assert session.hints_used(session.current) == 1
    assert session.reveal_hint()
    assert Progress(home).exercise("sigmoid").hints_used == 2


def test_file_watcher_reports_each_save_of_the_target_only(tmp_path):
    from tutor.file_watcher import FileWatcher

    root = tmp_path / "ws"
    (root / "ch").mkdir(parents=True)
    target, other = root / "ch" / "a.py", root / "ch" / "b.py"
    target.write_text("0")
    other.write_text("0")
    seen: list[Path] = []
    watcher = FileWatcher(root, seen.append)
    watcher.target = target
    watcher.start()
    try:
        time.sleep(0.5)  # let the watch settle
        other.write_text("1")
        time.sleep(1.0)
        assert seen == []
        for i in range(3):  # one burst (an editor writing a file in pieces) is one report
            target.write_text(f"burst {i}")
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert seen == [Path(os.path.realpath(target))]
        write(target, "saved by rename")
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(seen) == 2
    finally:
        watcher.stop()


# -- tutor open / tutor path ---------------------------------------------------------------------------


def test_path_prints_the_learners_file(home, course, capsys):
    assert cli.main(["path", "sigmoid"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(Workspace(home).path(course.exercise("sigmoid")).absolute())
    assert Path(out).read_text() == course.exercise("sigmoid").stub.read_text()
    assert cli.main(["path", "no-such-exercise"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "unknown exercise" in err and len(err.strip().splitlines()) == 1


def test_open_runs_the_editor_or_prints_the_path(home, course, capsys, monkeypatch, tmp_path):
    log = tmp_path / "editor-args"
    editor = tmp_path / "fake editor.py"
    editor.write_text(f"import sys, pathlib\npathlib.Path({str(log)!r}).write_text('\\n'.join(sys.argv[1:]))\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} '{editor}' --wait")
    monkeypatch.setenv("EDITOR", "should-not-be-used")
    assert cli.main(["open", "leaky-relu"]) == 0
    path = Workspace(home).path(course.exercise("leaky-relu")).absolute()
    assert log.read_text().splitlines() == ["--wait", str(path)]
    assert Progress(home).last_position() == (2, "leaky-relu")  # opening makes it current

    monkeypatch.delenv("VISUAL")
    monkeypatch.delenv("EDITOR")
    capsys.readouterr()
    assert cli.main(["open"]) == 0  # no editor set: the path of the current exercise
    captured = capsys.readouterr()
    assert captured.out.strip() == str(path)
    assert "$EDITOR" in captured.err

    monkeypatch.setenv("EDITOR", "no-such-editor-xyz")
    assert cli.main(["open", "sigmoid"]) == cli.EXIT_FAIL
    err = capsys.readouterr().err
    assert "no-such-editor-xyz" in err and len(err.strip().splitlines()) == 1


def test_watch_without_a_terminal_or_with_a_bad_target_is_one_line(home, capsys):
    assert cli.main(["watch", "chapter", "99"]) == cli.EXIT_USAGE
    assert "no chapter 99" in capsys.readouterr().err
    assert cli.main(["watch", "sigmoid"]) == cli.EXIT_FAIL  # pytest's stdin is not a terminal
    err = capsys.readouterr().err
    assert "interactive terminal" in err and "Traceback" not in err


def test_watch_chapter_starts_at_its_first_unfinished_exercise(home, course):
    from tutor.cli.watch import watch_target

    progress = Progress(home)
    progress.mark_passed("sigmoid")
    assert watch_target(course, ["chapter", "2"], progress).id == "leaky-relu"
    assert watch_target(course, ["2"], progress).id == "leaky-relu"
    assert watch_target(course, ["cpp-relu"], progress).id == "cpp-relu"


# -- the workspace carries what an editor needs -----------------------------------------------------


def test_workspace_has_editor_config_for_this_interpreter(home, course):
    ws = Workspace(home)
    ws.ensure(course)
    vscode = json.loads((ws.root / VSCODE_SETTINGS).read_text())
    assert vscode["python.defaultInterpreterPath"] == sys.executable
    pyright = json.loads((ws.root / PYRIGHT_CONFIG).read_text())
    spec = importlib.util.find_spec("torch")  # where this interpreter finds torch (no import)
    assert spec is not None and spec.origin is not None
    torch_dir = Path(spec.origin).resolve().parents[1]
    search = [Path(p).resolve() for p in pyright["extraPaths"]]
    if "venv" in pyright:
        search.append((Path(pyright["venvPath"]) / pyright["venv"]).resolve())
    # Pyright finds torch where this interpreter does.
    assert any(torch_dir == p or p in torch_dir.parents for p in search)


def test_editor_config_keeps_the_learners_edits_and_updates_its_own(home, course):
    ws = Workspace(home)
    ws.ensure(course)
    settings = ws.root / VSCODE_SETTINGS
    pyright = ws.root / PYRIGHT_CONFIG
    # A config tutor wrote for an older interpreter is brought up to date...
    stale = settings.read_text().replace(sys.executable, "/old/venv/bin/python")
    settings.write_text(stale)
    ledger = json.loads((ws.root / ".tutor-editor.json").read_text())
    ledger[VSCODE_SETTINGS] = stale
    (ws.root / ".tutor-editor.json").write_text(json.dumps(ledger))
    ws.ensure(course)
    assert json.loads(settings.read_text())["python.defaultInterpreterPath"] == sys.executable
    # ...but one the learner edited is theirs.
    pyright.write_text('{"typeCheckingMode": "strict"}\n')
    ws.ensure(course)
    assert pyright.read_text() == '{"typeCheckingMode": "strict"}\n'
