"""Time from launching `tutor start chapter N` to the first complete paint, against a bare
Textual hello-world app measured in the same run (target: at most 1.5x the bare app).

    python bench/bench_startup.py [--runs 5] [--chapter 3] [--size 120x36]

Each run is a fresh `python` process on a pseudo-terminal (a real terminal driver, not
headless). The parent notes the wall-clock time just before spawning; the child writes the
wall-clock time once the screen is painted and exits:
  - hello: `on_mount` + `call_after_refresh`;
  - tutor: the real command's path (`tutor.launch.main(["start", "chapter", N])`, the console
    script's entry, which pauses the garbage collector until the first paint: load the course,
    create the workspace, open progress, build the app) until the main screen has painted
    with its guide mounted. `TutorApp.warm_up` (called after the main screen's first paint)
    is replaced by the measurement, so no runner process starts. TUTOR_HOME is a temp dir.
Two tutor figures: the step's guide page seen before (drawn once at this width, so the
render cache has it: the usual start, coming back to the step left last time) and the page
never drawn (the render cache emptied before the run: the first visit, which imports and runs
the Markdown renderer). An uncounted run before each round opens the step and waits until
the page is drawn whole, as a learner's session does a moment after the first paint.
The child also reports the CPU time it used until then (time.process_time: steadier than the
wall clock when other programs load the machine) and whether `torch` was imported (it must
not be). Medians and the tutor/hello ratios are printed, then each child's CPU time by stage
(python start-up, imports, CLI, course load, workspace and app set-up, compose and mount,
first frame, the frame that completes the screen) to show where the excess lies.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


# CPU time (time.process_time) at the end of each stage of a child, in order; the parent prints
# the median of each stage's share, so the excess over the hello app can be located.
STAGES: list[tuple[str, float]] = []
_PROFILE: Any = None


def stage(name: str) -> None:
    STAGES.append((name, time.process_time()))


def report(out: str) -> None:
    if _PROFILE is not None:  # BENCH_PROFILE=file: where the CPU went, for pstats
        _PROFILE.disable()
        _PROFILE.dump_stats(os.environ["BENCH_PROFILE"])
    stages = " ".join(f"{name}={cpu!r}" for name, cpu in STAGES)
    Path(out).write_text(f"{time.time()} {'torch' in sys.modules} {time.process_time()} {stages}")


def child_hello(out: str) -> None:
    stage("python")
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    stage("imports")

    class Hello(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("Hello, world")

        def on_mount(self) -> None:
            stage("compose+mount")
            self.call_after_refresh(self.done)

        def done(self) -> None:
            stage("to-paint")
            report(out)
            self.exit()

    Hello().run()


def child_tutor(out: str, chapter: str, prime: bool = False) -> None:
    global _PROFILE
    stage("python")
    from tutor import gcpause

    gcpause.pause()  # what tutor.launch.main does first; its cli.main call is timed below
    if os.environ.get("BENCH_PROFILE"):
        import cProfile

        _PROFILE = cProfile.Profile()
        if not os.environ.get("BENCH_PROFILE_FRAME"):  # =1: only from the mount to the paint
            _PROFILE.enable()
    import tutor.cli as cli
    import tutor.ui.app as ui_app
    from tutor.ui.screens.main import MainScreen

    stage("imports")
    load, run, mount = cli._start_course, ui_app.TutorApp.run, MainScreen.on_mount

    def timed_load(*args: object, **kwargs: object) -> object:
        stage("cli")
        course = load(*args, **kwargs)  # type: ignore[arg-type]
        stage("course")
        return course

    def timed_run(self: ui_app.TutorApp, *args: Any, **kwargs: Any) -> Any:
        stage("workspace+app")
        return run(self, *args, **kwargs)

    async def timed_mount(self: MainScreen) -> None:
        await mount(self)
        stage("compose+mount")
        if _PROFILE is not None and os.environ.get("BENCH_PROFILE_FRAME"):
            _PROFILE.enable()

    cli._start_course = timed_load  # type: ignore[assignment]
    ui_app.TutorApp.run = timed_run  # type: ignore[method-assign,assignment]
    MainScreen.on_mount = timed_mount  # type: ignore[method-assign]

    def warm_up(self: ui_app.TutorApp) -> None:  # runs after the main screen's first paint
        guide = self.main.query_one("#guide")
        stage("first-frame")

        def done() -> None:
            stage("to-paint")
            report(out)
            self.exit()

        def wait() -> None:  # the guide holds the step's text once the screen opened it
            if getattr(guide, "source", None) or guide.children:
                self.call_after_refresh(done)
            else:
                self.set_timer(0.002, wait)

        def wait_complete() -> None:  # priming: until the whole page is drawn (and cached)
            page = getattr(guide, "_page", None)
            if page is not None and page.complete:
                self.call_after_refresh(done)
            else:
                guide.highlight_code()
                self.set_timer(0.05, wait_complete)

        wait_complete() if prime else wait()

    ui_app.TutorApp.warm_up = warm_up  # type: ignore[method-assign]
    from tutor.launch import main

    main(["start", "chapter", chapter])


def launch(kind: str, chapter: str, size: tuple[int, int], home: str) -> tuple[float, float, bool, dict[str, float]]:
    """Run one child on a pty; return (wall seconds from spawn to paint, CPU seconds the
    child used until then, torch imported, CPU seconds of each stage)."""
    out = tempfile.mktemp(prefix="tutor-bench-")
    master, slave = pty.openpty()
    cols, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(
        os.environ,
        TUTOR_HOME=home,
        TERM=os.environ.get("TERM", "xterm-256color"),
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    cmd = [sys.executable, __file__, "--child", kind, "--out", out, "--chapter", chapter]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    while proc.poll() is None:  # drain the terminal output so the child never blocks
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                os.read(master, 65536)
            except OSError:
                break
    proc.wait(timeout=30)
    os.close(master)
    try:
        stamp, torch_loaded, cpu, *marks = Path(out).read_text().split()
    except (OSError, ValueError):
        raise SystemExit(f"{kind}: the child did not report (exit {proc.returncode})") from None
    os.unlink(out)
    stages, before = {}, 0.0
    for mark in marks:
        name, value = mark.split("=")
        stages[name], before = float(value) - before, float(value)
    return float(stamp) - t0, float(cpu), torch_loaded == "True", stages


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


def pick_chapter(wanted: int) -> str:
    from tutor.course import load_course

    numbers = [c.number for c in load_course().chapters]
    return str(wanted if wanted in numbers else (2 if 2 in numbers else numbers[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chapter", default="3")
    parser.add_argument("--size", default="120x36")
    parser.add_argument("--child", choices=("hello", "tutor", "tutor-prime"))
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child == "hello":
        return child_hello(args.out)
    if args.child in ("tutor", "tutor-prime"):
        return child_tutor(args.out, args.chapter, prime=args.child == "tutor-prime")

    override = usable_course_root()
    if override:
        os.environ["TUTOR_COURSE"] = override  # the children inherit it
    chapter = pick_chapter(int(args.chapter))
    cols, rows = (int(v) for v in args.size.split("x"))
    size = (cols, rows)
    home = tempfile.mkdtemp(prefix="tutor-bench-home-")
    kinds = ("hello", "tutor", "tutor-new-page")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    stages: dict[str, dict[str, list[float]]] = {k: {} for k in kinds}
    torch_seen = False
    load_before = os.getloadavg()[0]
    from tutor import paths

    pages = paths.cache_dir(Path(home)) / "guide"  # tutor's render cache (tutor/ui/render_cache.py)
    launch("tutor-prime", chapter, size, home)  # creates the workspace, draws the page: not counted
    for _ in range(args.runs):
        for kind in kinds:  # interleaved, so machine load hits all alike
            if kind == "tutor-new-page":
                shutil.rmtree(pages, ignore_errors=True)  # the step's page was never drawn here
            seconds, cpu_s, torch_loaded, marks = launch("hello" if kind == "hello" else "tutor", chapter, size, home)
            times[kind].append(seconds)
            cpu[kind].append(cpu_s)
            for name, value in marks.items():
                stages[kind].setdefault(name, []).append(value)
            torch_seen |= torch_loaded and kind != "hello"
        launch("tutor-prime", chapter, size, home)  # draw the page again for the next round
    print(
        f"Startup to first complete paint, {args.runs} runs each, terminal {args.size}, "
        f"`tutor start chapter {chapter}`, load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    labels = {
        "hello": "bare Textual hello app",
        "tutor": "tutor, page seen before",
        "tutor-new-page": "tutor, page never drawn",
    }
    for kind in kinds:
        ms = [t * 1000 for t in times[kind]]
        print(
            f"  {labels[kind]:24s} wall median {statistics.median(ms):7.1f} ms (min {min(ms):7.1f})   "
            f"CPU median {statistics.median(cpu[kind]) * 1000:7.1f} ms"
        )
    for kind in kinds[1:]:
        wall = statistics.median(times[kind]) / statistics.median(times["hello"])
        best = min(times[kind]) / min(times["hello"])
        used = statistics.median(cpu[kind]) / statistics.median(cpu["hello"])
        used_best = min(cpu[kind]) / min(cpu["hello"])
        print(
            f"  ratio to hello, {labels[kind]}: wall (medians) {wall:.2f}x, wall (best runs) {best:.2f}x, "
            f"CPU (medians) {used:.2f}x, CPU (best runs) {used_best:.2f}x   (target <= 1.5x)"
        )
    print("  (on a busy machine the wall ratio swings with the load; the CPU-time ratio is the steadier one)")
    print(f"  torch imported by the app process: {'YES (bug)' if torch_seen else 'no'}")
    for kind in kinds:
        parts = ", ".join(f"{name} {statistics.median(v) * 1000:.0f}" for name, v in stages[kind].items())
        print(f"  CPU ms by stage (medians), {labels[kind]}: {parts}")


if __name__ == "__main__":
    main()
