"""Lessons are data: every manifest problem is reported as `file: field: what is wrong`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course import LessonError, load_course

ROOT = Path(__file__).resolve().parents[1]

GOOD = """format_version = 1
title = "Test chapter"
summary = "x"

[[steps]]
kind = "read"
id = "intro"
title = "Intro"
text = "intro.md"

[[steps]]
kind = "passage"
id = "typing"
title = "Type this"
text = "intro.md"

[[steps]]
kind = "exercise"
id = "ex-one"
title = "One"
text = "intro.md"
stub = "exercises/one.py"
solution = "one.py"
checker = "checks/one.py"
hints = ["a", "b", "c"]
timeout = 30
needs = { device = "cpu" }
"""


@pytest.fixture
def course_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "course"
    ch = root / "lessons" / "03-cpp-ops"
    (ch / "guide" / "en").mkdir(parents=True)
    (ch / "exercises").mkdir()
    (ch / "checks").mkdir()
    (root / "solutions" / "03-cpp-ops").mkdir(parents=True)
    (ch / "guide" / "en" / "intro.md").write_text("# Intro\n\n```python\nx = 1\n```\n")
    (ch / "exercises" / "one.py").write_text("# TODO\n")
    (ch / "checks" / "one.py").write_text("def check(ctx):\n    pass\n")
    (root / "solutions" / "03-cpp-ops" / "one.py").write_text("")
    (ch / "lesson.toml").write_text(GOOD)
    monkeypatch.setenv("TUTOR_COURSE", str(root))
    return root


def error_for(course_dir: Path, manifest: str) -> str:
    (course_dir / "lessons" / "03-cpp-ops" / "lesson.toml").write_text(manifest)
    with pytest.raises(LessonError) as info:
        load_course()
    return str(info.value)


def test_good_manifest_loads(course_dir):
    course = load_course()
    ch = course.chapter(3)
    assert [s.kind for s in ch.steps] == ["read", "passage", "exercise"]
    assert ch.passages[0].code() == "x = 1\n"
    assert course.exercise("ex-one").hints == ("a", "b", "c")


@pytest.mark.parametrize(
    "old,new,message",
    [
        (
            'hints = ["a", "b", "c"]',
            "hints = []",
            "lessons/03-cpp-ops/lesson.toml: steps[2].hints: must be a non-empty list",
        ),
        ('hints = ["a", "b", "c"]', 'hints = ["a"]', "steps[2].hints: must hold 3 to 5 hints, not 1"),
        ('hints = ["a", "b", "c"]', 'hints = ["a", "", "c"]', "steps[2].hints[1]: must be a non-empty string"),
        ("format_version = 1", "format_version = 9", "lesson.toml: format_version: is 9, this tutor reads version 1"),
        ("format_version = 1\n", "", "lesson.toml: format_version: is required"),
        ('title = "Test chapter"', "title = 3", "lesson.toml: title: must be a string"),
        ('kind = "read"', 'kind = "lecture"', "steps[0].kind: must be one of read, passage, exercise, not 'lecture'"),
        (
            'stub = "exercises/one.py"',
            'stub = "exercises/missing.py"',
            "steps[2].stub: file not found: lessons/03-cpp-ops/exercises/missing.py",
        ),
        (
            'solution = "one.py"',
            'solution = "nope.py"',
            "steps[2].solution: file not found: solutions/03-cpp-ops/nope.py",
        ),
        ("timeout = 30", "timeout = true", "steps[2].timeout: must be an integer or a number"),
        ("timeout = 30", "timeout = -1", "steps[2].timeout: must be between 0 and 600 seconds"),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "tpu" }',
            "steps[2].needs.device: must be one of cpu, any, cuda, not 'tpu'",
        ),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "cpu", processes = [2] }',
            "steps[2].needs.processes: a list must hold at least two world sizes",
        ),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "cpu", processes = [2, 1] }',
            "steps[2].needs.processes[1]: must be a whole number of at least 2",
        ),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "cpu", processes = [2, true] }',
            "steps[2].needs.processes[1]: must be a whole number of at least 2",
        ),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "cpu", processes = [4, 4] }',
            "steps[2].needs.processes: lists the same world size twice: [4, 4]",
        ),
        (
            'needs = { device = "cpu" }',
            'needs = { device = "cpu", processes = "2, 4" }',
            "steps[2].needs.processes: must be a whole number or a list of them",
        ),
        ('needs = { device = "cpu" }', "needs = { processes = 0 }", "steps[2].needs.processes: must be at least 1"),
        ('id = "typing"', 'id = "intro"', "steps[1].id: 'intro' is used by an earlier step"),
        (
            'text = "intro.md"\n\n[[steps]]\nkind = "exercise"',
            'text = "intro.md"\nblock = 4\n\n[[steps]]\nkind = "exercise"',
            "steps[1].block: the text has 1 python code block(s); block 4 does not exist",
        ),
    ],
)
def test_errors_name_file_field_and_problem(course_dir, old, new, message):
    assert old in GOOD
    text = error_for(course_dir, GOOD.replace(old, new, 1))
    assert message in text
    assert text.startswith("lessons/03-cpp-ops/lesson.toml: ")


def test_several_world_sizes_load_in_order(course_dir):
    (course_dir / "lessons" / "03-cpp-ops" / "lesson.toml").write_text(
        GOOD.replace('needs = { device = "cpu" }', "needs = { processes = [2, 4] }")
    )
    needs = load_course().exercise("ex-one").needs
    assert (needs.processes, needs.worlds, needs.world_sizes) == (2, (2, 4), (2, 4))
    assert needs.describe() == "runs 2 processes, then 4"


def test_one_world_size_is_as_before(course_dir):
    (course_dir / "lessons" / "03-cpp-ops" / "lesson.toml").write_text(
        GOOD.replace('needs = { device = "cpu" }', "needs = { processes = 2 }")
    )
    needs = load_course().exercise("ex-one").needs
    assert (needs.processes, needs.worlds, needs.world_sizes) == (2, (), (2,))
    assert needs.describe() == "runs 2 processes"


def test_invalid_toml_is_one_line(course_dir):
    text = error_for(course_dir, "format_version = = 1")
    assert text.startswith("lessons/03-cpp-ops/lesson.toml: not valid TOML")


def test_missing_guide_text(course_dir):
    text = error_for(course_dir, GOOD.replace('text = "intro.md"', 'text = "gone.md"', 1))
    assert "steps[0].text: file not found: lessons/03-cpp-ops/guide/en/gone.md" in text


def test_second_language_is_required_per_step_when_declared(course_dir):
    text = error_for(course_dir, GOOD.replace('summary = "x"', 'summary = "x"\nlanguages = ["en", "zh"]'))
    assert "guide/zh/intro.md" in text
    zh = course_dir / "lessons" / "03-cpp-ops" / "guide" / "zh"
    zh.mkdir()
    (zh / "intro.md").write_text("# 介绍\n\n```python\nx = 1\n```\n")
    course = load_course()
    step = course.chapter(3).steps[0]
    assert step.text("zh").startswith("# 介绍")
    assert step.text("fr").startswith("# Intro")  # falls back to English


def test_real_course_loads_every_chapter(monkeypatch):
    monkeypatch.delenv("TUTOR_COURSE", raising=False)
    course = load_course(ROOT / "lessons", ROOT / "solutions")
    assert [c.number for c in course.chapters] == list(range(1, 14))
    assert len(set(course.exercise_ids())) == len(course.exercise_ids())
