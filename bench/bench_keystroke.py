"""Keystroke-to-repaint latency in the tutor's code editor with a 300-line file.

    python bench/bench_keystroke.py [--lines 300] [--keys 200] [--gap-ms 60] [--size 120x36]

The whole TutorApp runs headless (`run_test`) on chapter 2's `sigmoid` exercise, whose
workspace file (in a temp TUTOR_HOME) is replaced by a 300-line module; the cursor starts on
line 150. The garbage collector is handled as the `tutor` command handles it (paused for
start-up, resumed after the first paint with start-up's objects set aside, one settling
collection 2 s later: tutor/gcpause.py), and typing starts after that settling, as a learner
reads the guide first. For each key: take the time, hand a Key event to the driver (as a
terminal would), let the app run for `gap` seconds (a fast typist's pace), and take the time the first
repaint (compositor update) after the edit reached the document finished. Autosave runs as in
real use (a save at most once a second while typing). Keys: letters, spaces, Enter (with
auto-indent) every 20th key and a Backspace every 15th. The same keys then go to a bare
`TextArea.code_editor` app as the baseline. Prints p50/p95/max. Textual paints at most 60
frames a second, so up to ~16 ms of any figure is waiting for the next frame slot.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tutor.ui  # noqa: F401  (first: it sets the app's Textual frame rate, as `tutor start` does)
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import TextArea

from tutor import gcpause
from tutor.course import load_course
from tutor.ui.app import TutorApp
from tutor.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]

BLOCK = '''\
class Block{n}(torch.nn.Module):
    """A residual MLP block, number {n}."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.up(self.norm(x)))
        return x + self.down(h)

'''


def usable_course_root() -> str | None:
    """None when the real course loads; else a copy of the fixed test course (TUTOR_COURSE)."""
    from tutor.course import LessonError, load_course

    try:
        load_course()
        return None
    except LessonError as exc:
        sys.path.insert(0, str(REPO))
        from tests.ui.course_fixture import build_course

        root = build_course(Path(tempfile.mkdtemp(prefix="tutor-bench-course-")))
        print(f"(the course does not load: {exc}; benchmarking the test course instead)")
        return str(root)


def module(lines: int) -> str:
    text, n = "import torch\n\n", 0
    while text.count("\n") < lines:
        text += BLOCK.format(n=n)
        n += 1
    return "\n".join(text.split("\n")[:lines]) + "\n"


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def key_for(i: int) -> tuple[str, str | None]:
    if i % 20 == 19:
        return "enter", "\r"
    if i % 15 == 14:
        return "backspace", None
    char = "the quick brown fox jumps over the lazy dog "[i % 44]
    return ("space", " ") if char == " " else (char, char)


async def measure(
    app: App, lines: int, keys: int, gap: float, size: tuple[int, int], settle: float = 0.0
) -> dict[str, list[float]]:
    """Type `keys` keys into the app's focused TextArea, `settle` seconds after it started;
    key->repaint and key->edit times."""
    repaints: list[float] = []
    edited_at: list[float] = []
    handler: list[float] = []
    latencies: list[float] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await asyncio.sleep(settle)
        editor = app.screen.query_one(TextArea)
        editor.focus()
        assert editor.document.line_count >= lines
        screen = app.screen
        for name in ("_compositor_refresh", "_refresh_layout"):  # stamp the end of repaints
            original = getattr(screen, name)

            def stamped(*args, _original=original, **kwargs):
                result = _original(*args, **kwargs)
                repaints.append(time.perf_counter())
                return result

            setattr(screen, name, stamped)
        edit = editor.edit

        def timed_edit(e):  # every keyboard change goes through TextArea.edit
            result = edit(e)
            edited_at.append(time.perf_counter())
            return result

        editor.edit = timed_edit  # type: ignore[method-assign]
        editor.move_cursor((lines // 2, 8))
        await pilot.pause()
        driver = app._driver
        assert driver is not None
        for i in range(keys):
            key, char = key_for(i)
            event = events.Key(key, char)
            event.set_sender(app)
            before = len(edited_at)
            repaints.clear()
            t0 = time.perf_counter()
            driver.send_message(event)
            await asyncio.sleep(gap)
            deadline = time.perf_counter() + 1.0  # a slow key is measured, not dropped
            while len(edited_at) == before and time.perf_counter() < deadline:
                await asyncio.sleep(0.005)
            if len(edited_at) == before:
                raise RuntimeError(f"key {key!r} did not edit the document")
            handler.append(edited_at[-1] - t0)
            done = [t for t in repaints if t >= edited_at[-1]]
            latencies.append((done[0] if done else time.perf_counter()) - t0)
    return {"latency": latencies, "handler": handler}


class Bare(App[None]):
    """The baseline: one TextArea.code_editor with the same text, nothing else."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield TextArea.code_editor(self.text, language="python")


async def run(lines: int, keys: int, gap: float, size: tuple[int, int]) -> dict[str, dict[str, list[float]]]:
    override = usable_course_root()
    if override:
        os.environ["TUTOR_COURSE"] = override
    course = load_course()
    exercise = course.exercise("sigmoid")
    home = Path(tempfile.mkdtemp(prefix="tutor-bench-"))
    Workspace(home).write(exercise, module(lines))
    chapter = course.chapter_of(exercise).number
    gcpause.pause()  # what `tutor` (tutor.launch) does before its first import
    app = TutorApp(course, home, chapter, exercise.id, warm_runner=False)
    try:
        tutor = await measure(app, lines, keys, gap, size, settle=2.5)
    finally:
        app.close_resources()
    bare = await measure(Bare(module(lines)), lines, keys, gap, size)
    return {"tutor editor": tutor, "bare TextArea": bare}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--gap-ms", type=float, default=60.0)
    parser.add_argument("--size", default="120x36", help="terminal COLSxROWS")
    args = parser.parse_args()
    cols, rows = (int(v) for v in args.size.split("x"))
    results = asyncio.run(run(args.lines, args.keys, args.gap_ms / 1000, (cols, rows)))
    print(f"Code editor, {args.lines}-line file, {args.keys} keys, {args.gap_ms:.0f} ms apart, terminal {cols}x{rows}")
    for app_name, figures in results.items():
        for name, label in (("latency", "key -> repaint"), ("handler", "key -> edit")):
            ms = [v * 1000 for v in figures[name]]
            print(
                f"  {app_name:14s} {label:15s} p50 {pct(ms, 50):6.2f} ms   "
                f"p95 {pct(ms, 95):6.2f} ms   max {max(ms):6.2f} ms"
            )


if __name__ == "__main__":
    main()
