"""The app follows the learner session's rules (tutor/session.py), and quits at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from support.courses import build_course_cpu_before_cuda
from support.fakes import FakeRunner
from tutor.course import load_course
from tutor.progress import Progress
from tutor.runner.protocol import Verdict
from tutor.ui.app import TutorApp

from .helpers import wait_for

TESTS = Path(__file__).resolve().parents[1]


async def test_next_after_a_pass_skips_an_exercise_this_machine_cannot_run(tmp_path, home) -> None:
    root = build_course_cpu_before_cuda(tmp_path / "course")
    course = load_course(root / "lessons", root / "solutions")
    runner = FakeRunner([Verdict(status="passed")])
    app = TutorApp(course, home, 3, "cpu-add", warm_runner=False, runner_factory=lambda: runner)
    try:
        async with app.run_test() as pilot:
            app.gpus = 0  # the runner said: no GPU here
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: Progress(home).exercise("cpu-add").status == "passed")
            await pilot.press("ctrl+n")
            await wait_for(pilot, lambda: app.main.step is not None and app.main.step.id == "outro")
            await pilot.press("alt+left")  # back by one: the CUDA exercise is still there to read
            await wait_for(pilot, lambda: app.main.step.id == "cuda-add")
            await pilot.press("ctrl+n")  # not passed: plain next
            await wait_for(pilot, lambda: app.main.step.id == "outro")
    finally:
        app.close_resources()


def test_ctrl_q_during_a_check_quits_at_once(course_root: Path, home: Path) -> None:
    """A check stuck in the runner (its start, a long build) must not hold the process after
    Ctrl+Q: the runner is cancelled first and no thread of the app outlives it."""
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(TESTS)!r})
        from pathlib import Path
        from support.fakes import FakeRunner
        from tutor.course import load_course
        from tutor.ui.app import TutorApp

        root = Path({str(course_root)!r})
        course = load_course(root / "lessons", root / "solutions")
        runner = FakeRunner(block_all=True)

        async def main():
            app = TutorApp(course, Path({str(home)!r}), 2, "sigmoid", warm_runner=False,
                           runner_factory=lambda: runner)
            async with app.run_test() as pilot:
                await pilot.press("ctrl+r")
                while not runner.started.is_set():
                    await pilot.pause(0.05)
                await pilot.press("ctrl+q")
                await pilot.pause()
            app.close_resources()
            print("exited", app.return_code, "cancels", runner.cancels, flush=True)

        asyncio.run(main())
        """
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-2000:]
    assert "exited 0 cancels" in done.stdout and "cancels 0" not in done.stdout, done.stdout
    # Start-up (imports, the app's first paint) takes seconds on a busy machine; a hang would
    # last until the timeout.
    assert took < 60, took
