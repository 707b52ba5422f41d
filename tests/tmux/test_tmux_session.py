"""Drive the real `tutor` command in a real terminal (tmux): type, Tab for a hint, run, read
the verdict off the screen, quit, and find the typed code saved on disk."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid

import pytest

from support.tmux import Pane, tutor_command

pytestmark = [pytest.mark.slow, pytest.mark.tmux]

TMUX = shutil.which("tmux")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_type_hint_run_and_quit_in_a_real_terminal(tmp_path, course):
    from tutor.progress import Progress
    from tutor.workspace import Workspace

    home = tmp_path / "home"
    exercise = course.exercise("sigmoid")
    ws = Workspace(home)
    ws.ensure(course)
    # The learner has written a correct solution already; they add a line and check it.
    ws.write(exercise, exercise.solution.read_text())
    Progress(home).set_position(2, "sigmoid")

    session = f"tutor-{uuid.uuid4().hex[:8]}"
    # Unset COLUMNS/LINES: inherited values would override the real terminal size.
    cmd = f"env -u COLUMNS -u LINES TUTOR_HOME={home} {tutor_command()} start chapter 2"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "140", "-y", "45", cmd], check=True)
    pane = Pane(session)
    try:
        pane.wait_for("Sigmoid", timeout=60)
        # The cursor starts at the top of the file: add a comment line there.
        pane.type("# typed in tmux")
        pane.send("Enter")
        pane.wait_for("# typed in tmux")
        pane.send("End")  # Tab at the end of a line of code asks for a hint
        pane.send("Tab")
        pane.wait_for("Hints 1/", timeout=20)
        pane.send("C-r")
        screen = pane.wait_for("PASS", timeout=120)
        assert "FAIL" not in screen
        pane.send("C-q")
        deadline = time.monotonic() + 20
        while (
            time.monotonic() < deadline
            and subprocess.run(["tmux", "has-session", "-t", session], capture_output=True).returncode == 0
        ):
            time.sleep(0.2)
        assert "# typed in tmux" in ws.read(exercise)
        assert Progress(home).exercise("sigmoid").status == "passed"
        assert Progress(home).exercise("sigmoid").hints_used == 1
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_reading_step_then_exercise_at_80x24(tmp_path, course):
    """The smallest supported terminal: a reading step, then an exercise, as a learner sees them."""
    from tutor.progress import Progress
    from tutor.workspace import Workspace

    home = tmp_path / "home"
    exercise = course.exercise("sigmoid")
    chapter = course.chapter_of(exercise)
    Progress(home).set_position(chapter.number, chapter.steps[0].id)
    assert type(chapter.steps[0]).__name__ == "ReadStep"
    session = f"tutor-{uuid.uuid4().hex[:8]}"
    cmd = f"env -u COLUMNS -u LINES TUTOR_HOME={home} {tutor_command()} start chapter {chapter.number}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", cmd], check=True)
    pane = Pane(session)
    try:
        pane.wait_for(f"Step 1/{len(chapter.steps)}", timeout=60)
        time.sleep(1)  # the first paint is complete
        screen = pane.wait_for("Quit")
        footer = screen.rstrip("\n").splitlines()[-1]
        for key in ("Next", "Help", "Quit"):  # the footer fits: Help and Quit are visible
            assert key in footer, footer
        assert "Check" not in footer and "Solution" not in footer  # nothing to check here
        assert chapter.steps[0].title.split()[0] in screen  # the navigator lists the steps
        title = exercise.title
        target = chapter.steps.index(exercise)
        for n in range(2, target + 2):  # to the exercise, step by step, as a learner would
            pane.send("C-n")
            pane.wait_for(f"Step {n}/{len(chapter.steps)}", timeout=20)
        pane.wait_for("id: sigmoid", timeout=20)
        time.sleep(1)
        screen = pane.screen()
        footer = screen.rstrip("\n").splitlines()[-1]
        for key in ("Hint", "Check", "Help", "Quit"):
            assert key in footer, footer
        assert title.split()[0] in screen
        # F2 (issue 27 #6): the steps list comes in and the editor keeps its right border on
        # the screen (the list takes the guide's place at 80 columns); F2 again brings the
        # guide back and the keys go to the editor.
        guide_words = screen.splitlines()[2][:20].strip()
        pane.send("F2")
        time.sleep(0.8)
        screen = pane.screen()
        rows = screen.splitlines()
        assert rows[2].startswith("╭") and rows[2].rstrip().endswith("╮") and len(rows[2].rstrip()) == 80, rows[2]
        assert "╭─ workspace/" in rows[2]  # the editor's border, named after the file
        bottom = next(r for r in rows[3:] if r.startswith("╰"))
        assert bottom.rstrip().endswith("╯") and len(bottom.rstrip()) == 80, bottom
        assert "▶" in screen and f"{target + 1}. " in screen  # the navigator, on this step
        assert guide_words not in screen
        pane.send("F2")
        time.sleep(0.8)
        screen = pane.screen()
        assert guide_words in screen and "╮" in screen.splitlines()[2]
        # Esc (a vim reflex) keeps the editor: the typing still lands in the code.
        pane.send("Escape")
        pane.type("# after esc")
        pane.send("Enter")
        pane.wait_for("# after esc")
        pane.send("Enter", "Up")  # an empty line: where a stuck learner's cursor sits
        pane.send("Tab")
        screen = pane.wait_for("Hints 1/", timeout=20)
        assert "# after esc" in screen  # the line being edited stays in view
        pane.send("C-r")  # the untouched stub fails, with its reason in the results
        screen = pane.wait_for("NotImplementedError", timeout=180)
        assert "Results" in screen and footer in screen
        pane.send("C-q")
        deadline = time.monotonic() + 20
        while (
            time.monotonic() < deadline
            and subprocess.run(["tmux", "has-session", "-t", session], capture_output=True).returncode == 0
        ):
            time.sleep(0.2)
        assert Workspace(home).read(exercise).startswith("# after esc\n")
        assert Progress(home).exercise("sigmoid").hints_used == 1
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_sigkill_mid_typing_loses_at_most_the_last_second(tmp_path, course):
    from tutor.progress import Progress
    from tutor.workspace import Workspace

    home = tmp_path / "home"
    exercise = course.exercise("sigmoid")
    ws = Workspace(home)
    ws.ensure(course)
    Progress(home).set_position(2, "sigmoid")
    session = f"tutor-{uuid.uuid4().hex[:8]}"
    pid_file = tmp_path / "pid"
    cmd = (
        f"env -u COLUMNS -u LINES TUTOR_HOME={home} sh -c 'echo $$ > {pid_file}; "
        f"exec {tutor_command()} start chapter 2'"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "140", "-y", "45", cmd], check=True)
    pane = Pane(session)
    try:
        pane.wait_for("Sigmoid", timeout=60)
        pane.type("# first words")
        pane.send("Enter")
        pane.wait_for("# first words")
        time.sleep(1.5)  # more than the autosave debounce
        pane.type("# typed just before the kill")
        pid = int(pid_file.read_text())
        subprocess.run(["kill", "-9", str(pid)], check=True)
        text = ws.read(exercise)
        assert text.startswith("# first words\n")
        assert text.endswith(exercise.stub.read_text()) or "# typed just before" in text
        assert not list(ws.path(exercise).parent.glob(".*.tmp"))  # no torn temp files left
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
