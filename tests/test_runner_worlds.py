"""A check at several world sizes (`needs = { processes = [2, 4] }`), through the real runner:
the learner's ranks and the reference's run at each size in turn, a size that fails fails the
verdict with a reason naming it, the phases say which size they belong to, and each size keeps
its reference run in the warm server."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutor.runner.client import Runner
from tutor.runner.protocol import Event, RunRequest, Verdict

FIX = Path(__file__).parent / "runner_fixtures"
RIGHT = (FIX / "world_solution.py").read_text()
# A split that holds for two ranks only: rank 0 the first half, every other rank the second.
HALVES = RIGHT.replace(
    "    return x.chunk(world)[rank].clone()",
    "    half = x.shape[0] // 2\n    return (x[:half] if rank == 0 else x[half:]).clone()",
)

pytestmark = pytest.mark.slow


def run(
    runner: Runner, tmp_path: Path, source: str, worlds: list[int], timeout: float = 60, seed: int = 5
) -> tuple[Verdict, list[Event]]:
    path = tmp_path / f"learner_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(textwrap.dedent(source))
    events: list[Event] = []
    request = RunRequest(
        exercise="test/world",
        code=str(path),
        solution=str(FIX / "world_solution.py"),
        checker=str(FIX / "world_check.py"),
        timeout=timeout,
        processes=worlds[0],
        worlds=worlds if len(worlds) > 1 else [],
        seed=seed,
    )
    return runner.run(request, events.append), events


def phases(events: list[Event]) -> list[str]:
    return [e.text for e in events if e.kind == "phase"]


def test_a_right_answer_passes_at_every_size_and_the_phases_name_them(runner, tmp_path):
    v, events = run(runner, tmp_path, RIGHT, [2, 4])
    assert v.status == "passed", (v.reason, v.output)
    seen = phases(events)
    assert "checking with 2 processes (1/2)" in seen and "checking with 4 processes (2/2)" in seen, seen
    assert "with 2 processes: splitting the rows" in seen and "with 4 processes: splitting the rows" in seen, seen
    assert seen.index("checking with 2 processes (1/2)") < seen.index("checking with 4 processes (2/2)")
    assert v.figures["world_size"] == 2  # the first size's figures on a pass
    assert "--- with 2 processes ---" in v.output and "--- with 4 processes ---" in v.output
    clocks = [e.elapsed_s for e in events]
    assert clocks == sorted(clocks), "each size's clock goes on from the previous size's"


def test_code_that_assumes_two_ranks_fails_naming_the_other_size(runner, tmp_path):
    v, events = run(runner, tmp_path, HALVES, [2, 4])
    assert v.status == "failed", (v.status, v.reason)
    assert v.reason.startswith("with 4 processes: rank "), v.reason
    assert "this rank's rows" in v.reason
    assert v.figures == {}  # the failing size's figures (it failed before reporting any)
    # the same code at the one size it was written for passes: the second size is the test
    alone, _events = run(runner, tmp_path, HALVES, [2])
    assert alone.status == "passed", alone.reason
    assert not any("with 2 processes" in p for p in phases(_events))


def test_a_failure_at_the_first_size_stops_the_check_there(runner, tmp_path):
    wrong = RIGHT.replace("    dist.all_reduce(out)\n", "")
    v, events = run(runner, tmp_path, wrong, [2, 3])
    assert v.status == "failed" and v.reason.startswith("with 2 processes: rank "), v.reason
    assert "the sum over the ranks" in v.reason
    assert not any("3 processes" in p for p in phases(events)), phases(events)


def test_every_size_keeps_its_reference_run(runner, tmp_path):
    first, _ = run(runner, tmp_path, RIGHT, [2, 3], seed=11)
    assert first.status == "passed", first.reason
    again, events = run(runner, tmp_path, RIGHT, [2, 3], seed=11)
    assert again.status == "passed", again.reason
    launched = [e.info.get("role") for e in events if e.kind == "phase" and "launching" in e.info]
    assert launched == ["learner", "learner"], launched  # no reference process at either size
    # a single-size run of 3 uses the reference the two-size run kept at 3
    alone, events = run(runner, tmp_path, RIGHT, [3], seed=11)
    assert alone.status == "passed"
    assert [e.info.get("role") for e in events if "launching" in e.info] == ["learner"]


def test_the_time_limit_holds_per_size_and_the_client_waits_for_the_second(plain_runner_worlds, tmp_path):
    # Stuck only with 3 ranks: the first size passes, the second times out at its own limit,
    # and the client, told of the second size's limit, waits for it instead of restarting.
    stuck = RIGHT.replace(
        "    return x.chunk(world)[rank].clone()",
        "    while world == 3:\n        pass\n    return x.chunk(world)[rank].clone()",
    )
    v, events = run(plain_runner_worlds, tmp_path, stuck, [2, 3], timeout=15)
    assert v.status == "timeout", (v.status, v.reason)
    assert v.reason.startswith("with 3 processes: your code did not finish within 15 s"), v.reason


@pytest.fixture(scope="module")
def plain_runner_worlds(tmp_path_factory: pytest.TempPathFactory):
    r = Runner(cache_dir=tmp_path_factory.mktemp("cache"), device="cpu", grace_s=4)
    yield r
    r.close()


def test_an_exercise_at_several_sizes_sends_them_all(course, tmp_path):
    exercise = course.exercise("ddp-accum")
    assert len(exercise.needs.world_sizes) > 1
    request = Runner(device="cpu").request_for(exercise, exercise.solution, seed=3)
    assert request.processes == exercise.needs.world_sizes[0]
    assert request.worlds == list(exercise.needs.world_sizes)


def test_the_sizes_phases_are_in_the_learners_language(runner, tmp_path):
    path = tmp_path / "zh_learner.py"
    path.write_text(HALVES)
    events: list[Event] = []
    request = RunRequest(
        exercise="test/world",
        code=str(path),
        solution=str(FIX / "world_solution.py"),
        checker=str(FIX / "world_check.py"),
        timeout=60,
        processes=2,
        worlds=[2, 3],
        seed=5,
        lang="zh",
    )
    v = runner.run(request, events.append)
    assert v.status == "failed" and v.reason.startswith("3 个进程时："), v.reason
    assert "用 2 个进程检查（1/2）" in phases(events), phases(events)
