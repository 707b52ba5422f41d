"""A learner's check draws its input seed from the exercise's pool: the seeds on which the
chapter tests run the reference and every mutant, so no verdict rests on an unseen draw."""

from __future__ import annotations

from pathlib import Path

from tutor.course import load_course
from tutor.runner.client import Runner
from tutor.seeds import POOL, seed_pool


def test_every_check_draws_its_seed_from_the_pool(tmp_path: Path) -> None:
    exercise = load_course().exercise("quant-qat-2bit")
    runner = Runner(cache_dir=tmp_path, device="cpu")
    drawn = {runner.request_for(exercise, tmp_path / "x.py").seed for _ in range(200)}
    assert drawn == set(seed_pool("quant-qat-2bit")) and len(drawn) == POOL
    assert runner.request_for(exercise, tmp_path / "x.py", seed=12345).seed == 12345  # --seed


def test_pools_differ_between_exercises_and_never_change() -> None:
    assert seed_pool("sigmoid") != seed_pool("leaky-relu")
    # Pinned: a changed pool would silently make the suite's seeds differ from the learners'.
    assert seed_pool("sigmoid") == [807548523, 807556442, 807564361]
