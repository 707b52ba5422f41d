"""Targeted hints: a known mistake in the manifest, recognised from the failure reason, and
proved reachable by running its mutant (issue 15, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course import LessonError, load_course
from support.courses import build_course

MISTAKE = """
[[steps.mistakes]]
when = "saved a tensor that is not its output"
hint = "You saved x. Backward can be written with the output alone: save s = sigmoid(x) instead."
mutant = [["ctx.save_for_backward(s)", "ctx.save_for_backward(x)"]]
"""


def course_with(tmp_path: Path, extra: str) -> Path:
    root = build_course(tmp_path / "course")
    toml = root / "lessons" / "02-custom-autograd" / "lesson.toml"
    text = toml.read_text()
    head, sep, tail = text.partition('[[steps]]\nkind = "read"\nid = "recap"')
    toml.write_text(head + extra + "\n" + sep + tail)
    return root


def test_a_mistake_is_recognised_from_the_failure_reason(tmp_path):
    root = course_with(tmp_path, MISTAKE)
    ex = load_course(root / "lessons", root / "solutions").exercise("sigmoid")
    assert len(ex.mistakes) == 1
    found = ex.mistake_for("Sigmoid saved a tensor that is not its output (the input x?)")
    assert found is not None and found.hint.startswith("You saved x")
    assert ex.mistake_for("output: max abs error 0.5") is None


@pytest.mark.parametrize(
    "extra,field",
    [
        ('\n[[steps.mistakes]]\nhint = "h"\nmutant = [["a", "b"]]\n', "mistakes[0].when"),
        ('\n[[steps.mistakes]]\nwhen = "w"\nmutant = [["a", "b"]]\n', "mistakes[0].hint"),
        ('\n[[steps.mistakes]]\nwhen = "w"\nhint = "h"\nmutant = [["a"]]\n', "mistakes[0].mutant[0]"),
        ('\n[[steps.mistakes]]\nwhen = "w"\nhint = "h"\nmutnat = []\n', "mistakes[0].mutnat"),
    ],
)
def test_a_bad_mistake_names_its_file_and_field(tmp_path, extra, field):
    root = course_with(tmp_path, extra)
    with pytest.raises(LessonError) as err:
        load_course(root / "lessons", root / "solutions")
    assert "lesson.toml" in str(err.value) and field in str(err.value)


@pytest.mark.slow
def test_dev_check_runs_each_mutant_and_proves_its_hint_reachable(tmp_path, runner):
    from tutor.course_rules import mistake_problems

    good = course_with(tmp_path / "good", MISTAKE)
    ex = load_course(good / "lessons", good / "solutions").exercise("sigmoid")
    assert mistake_problems([ex], runner, tmp_path / "scratch-good") == []
    wrong_words = MISTAKE.replace("saved a tensor that is not its output", "forgot to square")
    bad = course_with(tmp_path / "bad", wrong_words)
    ex = load_course(bad / "lessons", bad / "solutions").exercise("sigmoid")
    problems = mistake_problems([ex], runner, tmp_path / "scratch-bad")
    assert len(problems) == 1 and "would never be offered" in problems[0]
