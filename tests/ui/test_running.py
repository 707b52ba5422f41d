"""Checking code: verdicts, progress records, cancel-and-rerun; the real runner (slow)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tutor.progress import Progress
from tutor.runner.protocol import Event, Verdict
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.navigator import StepNavigator
from tutor.ui.widgets.results import ResultsPanel

from .course_fixture import SOLUTION
from .helpers import FakeRunner, text_of, wait_for

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
