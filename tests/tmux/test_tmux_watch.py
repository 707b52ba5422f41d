"""Drive the real `tutor watch` in a real terminal (tmux, 80x24): the learner's "editor" writes
a wrong solution, then a right one, from outside; the verdicts appear on screen in that order,
the pass moves watching on to the next exercise, `q` quits, and the pass is in the progress."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from support.tmux import Pane, tutor_command

pytestmark = [pytest.mark.slow, pytest.mark.tmux]

TMUX = shutil.which("tmux")


def save(path: Path, text: str) -> None:
    """As an editor does: write a temp file beside it and rename it over the original."""
    tmp = path.with_name(f".{path.name}.tmp-editor")
    tmp.write_text(text)
    os.replace(tmp, path)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI installs it)")
def test_watch_in_a_real_terminal(tmp_path, course):
    from tutor.progress import Progress
    from tutor.workspace import Workspace

    home = tmp_path / "home"
    sigmoid = course.exercise("sigmoid")
    path = Workspace(home).path(sigmoid)
    solution = sigmoid.solution.read_text()
    wrong = solution.replace("return grad_out * s * (1 - s)", "return grad_out * s")
    assert wrong != solution

    session = f"tutor-watch-{uuid.uuid4().hex[:8]}"
    cmd = f"env -u COLUMNS -u LINES TUTOR_HOME={home} {tutor_command()} watch sigmoid"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", cmd], check=True)
    pane = Pane(session, pause=0)
    try:
        pane.wait_for("every save is checked", timeout=60)
        screen = pane.wait_for("q Quit", timeout=10)  # the keys are in view at 80x24
        assert "sigmoid.py" in screen.replace("\n", "")  # the file's path, folded if long
        save(path, wrong)
        screen = pane.wait_for("FAIL", timeout=180)
        assert "gradient" in screen  # the reason, as the app's results panel shows it
        save(path, solution)
        screen = pane.wait_for("PASS", timeout=180)
        screen = pane.wait_for("Leaky ReLU", timeout=20)
        assert "leaky_relu.py" in screen  # now watching the next exercise's file
        pane.send("q")
        deadline = time.monotonic() + 20
        while (
            time.monotonic() < deadline
            and subprocess.run(["tmux", "has-session", "-t", session], capture_output=True).returncode == 0
        ):
            time.sleep(0.2)
        progress = Progress(home)
        assert progress.exercise("sigmoid").status == "passed"
        assert [r.status for r in progress.runs("sigmoid")] == ["passed", "failed"]
        assert progress.last_position() == (2, "leaky-relu")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
