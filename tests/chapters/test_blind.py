"""Blind mutants: wrong-but-plausible and correct-but-different solutions written by someone who
read only the exercise's guide page, stub and reference solution, never its checker
(tests/chapters/blind/README.md). Every `wrong_*.py` must be rejected on every seed it runs
on, every `right_*.py` must pass. Each file's first line says what it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import REJECTED, _warm, chapter_folders, describe, mutant_seeds

pytestmark = pytest.mark.slow

BLIND = Path(__file__).parent / "blind"
# Chapters whose checks take a few seconds, and whose checkers have been brought up to their
# blind mutants, run them in the suite; the others run on demand (TUTOR_ON_DEMAND=all python -m
# pytest tests/chapters/test_blind.py, CONTRIBUTING.md): the slow ones (compiles, C++ builds,
# torchrun, Lightning, quantization) take minutes per exercise, and chapters 2-6 still have
# checker gaps their blind mutants show.
SUITE_CHAPTERS = ("07-torchscript", "09-data-loading")


def _known_misses() -> dict[str, str]:
    """`exercise/file.py` -> why: blind files the checker still gets wrong, each a checker gap
    to close (strict xfail: fixing the gap makes the test fail until the line is removed)."""
    path = BLIND / "KNOWN_MISSES"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition(" ")
            out[name] = why.strip()
    return out


def _cases() -> list:
    known = _known_misses()
    cases = []
    for path in sorted(BLIND.glob("*/*.py")):
        kind = path.name.split("_", 1)[0]
        if kind not in ("wrong", "right"):
            continue
        exercise = path.parent.name
        # On the xdist worker that already holds the chapter's warm reference runs.
        folder = chapter_folders().get(exercise, "blind")
        marks = [pytest.mark.xdist_group(f"tests/chapters/test_ch{folder.replace('-', '_')}.py")]
        if folder not in SUITE_CHAPTERS:
            marks.append(pytest.mark.on_demand)
        why = known.get(f"{exercise}/{path.name}")
        if why is not None:
            marks.append(pytest.mark.xfail(reason=f"known checker gap: {why}", strict=True))
        cases.append(pytest.param(exercise, kind, path, id=f"{exercise}/{path.stem}", marks=marks))
    return cases


def what_it_does(path: Path) -> str:
    first = path.read_text(encoding="utf-8").lstrip().splitlines()[0]
    return first.strip('"').strip()


@pytest.mark.parametrize(("exercise", "kind", "path"), _cases())
def test_blind_solution(check_code, solution_text, course, exercise, kind, path):
    ex = course.exercise(exercise)
    if ex.needs.device == "cuda":
        pytest.skip("needs a CUDA GPU")
    seeds = mutant_seeds(f"blind|{exercise}|{path.name}", None, exercise)
    for s in seeds:
        _warm(check_code, solution_text, exercise, s)
    for s in seeds:
        v = check_code(exercise, path, seed=s)
        if kind == "wrong":
            assert v.status in REJECTED, f"a blind wrong solution passed: {what_it_does(path)}\n{describe(v)}"
            assert v.reason.strip(), describe(v)
        else:
            assert v.status == "passed", f"a blind correct solution was rejected: {what_it_does(path)}\n{describe(v)}"
