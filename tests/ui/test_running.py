"""Checking code: verdicts, progress records, cancel-and-rerun; the real runner (slow)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from tutor.progress import Progress
from tutor.runner.protocol import CANCELLED, Event, Verdict
from tutor.ui.phase_log import PhaseLog
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.navigator import StepNavigator
from tutor.ui.widgets.results import ResultsPanel

from support.courses import SOLUTION
from support.fakes import FakeRunner

from .helpers import text_of, wait_for

PASSED = Verdict(
    status="passed",
    figures={
        "time": {"learner_s": 2e-5, "reference_s": 2e-5, "speedup": 1.0, "noisy": False},
        "memory": {"learner_bytes": 1024, "reference_bytes": 1024},
    },
    duration_s=1.5,
)
FAILED = Verdict(
    status="failed", reason="gradient of x differs", details=["at [0, 1]"], output="debug print\n", duration_s=1.0
)


async def test_failing_check_shows_reason_and_records_run(make_app, home: Path) -> None:
    runner = FakeRunner(
        [FAILED], events=[Event("phase", "checking trial 2/4", 0.5), Event("output", "debug print\n", 0.6)]
    )
    app = make_app(step_id="sigmoid", runner=runner)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"# edit")
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        assert runner.calls[0][1].startswith("# edit")  # saved before the run
        banner = text_of(results.query_one("#results-banner"))
        body = text_of(results.query_one("#results-body"))
        assert "FAIL" in banner and "gradient of x differs" in body and "debug print" in body
        assert results.has_class("-failed")
        runs = Progress(home).runs("sigmoid")
        assert [(r.status, r.reason) for r in runs] == [("failed", "gradient of x differs")]
        assert Progress(home).exercise("sigmoid").status == "started"
        assert "◐" in str(app.query_one(StepNavigator).prompt(2))


async def test_passing_check_celebrates_and_updates_progress(make_app, home: Path) -> None:
    runner = FakeRunner([PASSED])
    app = make_app(step_id="sigmoid", runner=runner)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: results.verdict is not None)
        banner = text_of(results.query_one("#results-banner"))
        assert "PASS" in banner and "Ctrl+N" in banner
        assert results.has_class("-passed")
        assert not app._notifications  # the banner celebrates; no toast over the panel
        body = text_of(results.query_one("#results-body"))
        assert "you" in body and "ref" in body and "speedup 1.00×" in body
        assert Progress(home).exercise("sigmoid").status == "passed"
        assert Progress(home).runs("sigmoid")[0].figures["time"]["speedup"] == 1.0
        assert app.sub_title == "1/1 exercises passed"
        assert "✔" in str(app.query_one(StepNavigator).prompt(2))
        await pilot.press("ctrl+n")
        assert app.main.step.id == "recap"


async def test_a_stale_verdict_is_ignored_after_a_rerun(make_app, home: Path) -> None:
    """The UI side of a rerun (a fake runner); the real cancel is the slow test below."""
    runner = FakeRunner([PASSED], block_first=True)
    app = make_app(step_id="sigmoid", runner=runner)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await wait_for(pilot, lambda: len(runner.calls) == 1)
        assert results.running
        assert "checking trial 1/4" in text_of(results.query_one("#results-phase"))
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: results.verdict is not None)
        assert runner.cancels == 1 and len(runner.calls) == 2
        assert results.verdict.status == "passed"
        # the cancelled run is not recorded
        assert [r.status for r in Progress(home).runs("sigmoid")] == ["passed"]


class SlowPhases(FakeRunner):
    """Phases a distributed check sends, some time apart (what ddp-accum's run says)."""

    PHASES = [
        (0.25, "launching 2 processes for the reference solution"),
        (0.25, "launching 2 processes for your code"),
        (0.0, "wrapping your model"),
        (0.0, "training step 1/2"),
        (0.0, "training step 2/2"),
    ]

    def __init__(self) -> None:
        super().__init__([PASSED], block_first=True)
        self.seen = threading.Event()

    def check(self, exercise, code, on_event=None, seed=None):
        self.calls.append((exercise.id, Path(code).read_text()))
        for pause, text in self.PHASES:
            time.sleep(pause)
            on_event(Event("phase", text, 0.0))
        self.seen.set()
        self.cancelled.wait(10)
        return Verdict(status=CANCELLED)


async def test_each_phase_of_a_long_check_is_named_with_its_own_clock(make_app) -> None:
    """Issue 27 #7: not `starting the runner · 22.0 s` throughout, but the phase in progress
    with the seconds spent in it and in all, and the phases over with their times."""
    runner = SlowPhases()
    app = make_app(step_id="sigmoid", runner=runner)
    async with app.run_test(size=(120, 40)) as pilot:
        results = app.main.query_one(ResultsPanel)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert "starting the runner · 0." in text_of(results.query_one("#results-phase"))
        await wait_for(pilot, runner.seen.is_set)
        await pilot.pause(0.3)
        phase = text_of(results.query_one("#results-phase"))
        # the counted phase is one phase whose counter moves on; its clock is its own
        assert phase.startswith("training step 2/2 · 0.") and "s in all" in phase
        in_all = float(phase.split("·")[-1].split()[0])
        assert in_all >= 0.5
        body = text_of(results.query_one("#results-body"))
        # each over phase with its time (0.25 s each here; a loaded machine adds a little)
        assert re.search(
            r"✓ starting the runner (0\.[2-9]|1\.\d) s  ✓ launching 2 processes for the reference solution (0\.[2-9]|1\.\d) s",
            body,
        )
        assert "processes for your code" not in body  # over in no time: not worth a mention
        await pilot.press("ctrl+r")  # cancel and rerun: the new run starts its own phases
        await wait_for(pilot, lambda: results.verdict is not None)


def test_phase_log_times_each_phase_and_counts_a_counted_phase_once() -> None:
    log = PhaseLog("starting the runner", 10.0)
    log.enter("launching 2 processes for your code", 13.5)
    log.enter("importing your code", 13.55)
    log.enter("checking trial 1/5", 14.0)
    log.enter("checking trial 2/5", 15.0)
    assert log.current(16.0) == ("checking trial 2/5", 2.0, 6.0)
    assert [(t, round(s, 2)) for t, s in log.listed()] == [
        ("starting the runner", 3.5),
        ("importing your code", 0.45),
    ]  # the 0.05 s launch is too brief to list
    log.enter("timing your function", 20.0)
    assert log.listed()[-1] == ("checking trial 2/5", 6.0)


async def test_run_on_a_read_step_does_nothing(make_app) -> None:
    runner = FakeRunner()
    app = make_app(step_id="why", runner=runner)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert runner.calls == []


@pytest.mark.slow
async def test_real_runner_fails_the_stub_and_passes_the_solution(make_app, home: Path) -> None:
    app = make_app(step_id="sigmoid", warm_runner=True, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        results = app.main.query_one(ResultsPanel)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: results.verdict is not None, timeout=240)
        assert results.verdict.status in ("failed", "error"), results.verdict
        assert "NotImplementedError" in results.verdict.reason + results.verdict.output
        assert not results.has_class("-passed")

        editor = app.main.query_one("#editor", CodeEditor)
        editor.load_text(SOLUTION)  # as if typed: the run saves it first
        await pilot.press("f5")
        await wait_for(pilot, lambda: results.verdict is not None, timeout=240)
        assert results.verdict.status == "passed", results.verdict
        assert "PASS" in text_of(results.query_one("#results-banner"))
        assert [r.status for r in Progress(home).runs("sigmoid")][:1] == ["passed"]
        assert Progress(home).exercise("sigmoid").status == "passed"


@pytest.mark.slow
async def test_rerun_really_cancels_the_run_in_flight(make_app, home: Path, tmp_path: Path) -> None:
    """The real runner: a check stuck in the learner's code is cancelled by the second Ctrl+R,
    whose run (of the fixed code) passes; the cancelled run is not recorded."""
    from tutor import paths
    from tutor.runner.client import Runner

    verdicts: list[str] = []

    class Recording(Runner):
        def check(self, *a, **kw):
            verdict = super().check(*a, **kw)
            verdicts.append(verdict.status)
            return verdict

    runner = Recording(cache_dir=paths.cache_dir(home), device="cpu")
    app = make_app(step_id="sigmoid", warm_runner=True, device="cpu", runner=runner)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.main.query_one("#editor", CodeEditor)
        editor.load_text("import time\ntime.sleep(120)\n" + SOLUTION)
        await wait_for(pilot, lambda: app.gpus is not None, timeout=240)  # the runner is up
        await pilot.press("ctrl+r")
        results = app.main.query_one(ResultsPanel)
        await pilot.pause(5)  # the run is in flight, stuck in the learner's sleep
        assert results.running
        editor.load_text(SOLUTION)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: results.verdict is not None, timeout=240)
        assert results.verdict.status == "passed", results.verdict
        await wait_for(pilot, lambda: len(verdicts) == 2, timeout=60)
        assert verdicts == ["cancelled", "passed"]
        assert [r.status for r in Progress(home).runs("sigmoid")] == ["passed"]


async def test_quitting_during_a_check_does_not_wait_for_it(make_app) -> None:
    # A check in flight holds a worker thread inside the runner: Ctrl+Q cancels it, so the
    # app ends at once instead of when the check would have ended (here: 10 s).
    runner = FakeRunner(block_first=True)
    app = make_app(step_id="sigmoid", runner=runner)
    start = time.monotonic()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause(0.3)
        assert app.main.query_one(ResultsPanel).running
        await pilot.press("ctrl+q")
    assert runner.cancels >= 1
    assert time.monotonic() - start < 8
