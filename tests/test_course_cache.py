"""`tutor start` loads the course through a cache: it must give the same course as a full load,
and any change to a lesson file must be seen (and validated, with file and field named)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_course_loader import GOOD
from tutor.course import LessonError, load_course, load_course_cached


@pytest.fixture
def course_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One chapter with a read step, a passage and an exercise (as in test_course_loader)."""
    root = tmp_path / "course"
    ch = root / "lessons" / "03-cpp-ops"
    for folder in (ch / "guide" / "en", ch / "exercises", ch / "checks", root / "solutions" / "03-cpp-ops"):
        folder.mkdir(parents=True)
    (ch / "guide" / "en" / "intro.md").write_text("# Intro\n\n```python\nx = 1\n```\n")
    (ch / "exercises" / "one.py").write_text("# TODO\n")
    (ch / "checks" / "one.py").write_text("def check(ctx):\n    pass\n")
    (root / "solutions" / "03-cpp-ops" / "one.py").write_text("")
    (ch / "lesson.toml").write_text(GOOD)
    monkeypatch.setenv("TUTOR_COURSE", str(root))
    return root


def _touch_later(path: Path, text: str) -> None:
    """Rewrite `path` with a modification time that surely differs from the cached one."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def test_cached_course_equals_a_full_load(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "course-en.pickle"
    first = load_course_cached(cache)
    assert cache.is_file()
    again = load_course_cached(cache)
    assert first == again == load_course()
    assert [s.id for s in again.chapter(3).steps] == ["intro", "typing", "ex-one"]


def test_an_edited_manifest_is_seen(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "course.pickle"
    assert load_course_cached(cache).chapter(3).title == "Test chapter"
    manifest = course_dir / "lessons" / "03-cpp-ops" / "lesson.toml"
    _touch_later(manifest, GOOD.replace('title = "Test chapter"', 'title = "Renamed"'))
    assert load_course_cached(cache).chapter(3).title == "Renamed"


def test_a_broken_manifest_still_names_file_and_field(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "course.pickle"
    load_course_cached(cache)
    manifest = course_dir / "lessons" / "03-cpp-ops" / "lesson.toml"
    _touch_later(manifest, GOOD.replace('hints = ["a", "b", "c"]', "hints = []"))
    with pytest.raises(LessonError) as exc:
        load_course_cached(cache)
    assert str(exc.value) == "lessons/03-cpp-ops/lesson.toml: steps[2].hints: must be a non-empty list"


def test_a_deleted_file_is_reported(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "course.pickle"
    load_course_cached(cache)
    (course_dir / "lessons" / "03-cpp-ops" / "checks" / "one.py").unlink()
    with pytest.raises(LessonError, match=r"steps\[2\]\.checker: file not found"):
        load_course_cached(cache)


def test_a_new_translation_is_seen(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "course-zh.pickle"
    assert "zh" not in load_course_cached(cache, lang="zh").chapter(3).steps[0].texts
    zh = course_dir / "lessons" / "03-cpp-ops" / "guide" / "zh"
    zh.mkdir()
    (zh / "intro.md").write_text("# 介绍\n\n```python\nx = 1\n```\n")
    course = load_course_cached(cache, lang="zh")
    assert course == load_course(lang="zh")
    assert "zh" in course.chapter(3).steps[0].texts


def test_a_damaged_cache_is_ignored(course_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "course.pickle"
    cache.write_bytes(b"not a pickle")
    assert load_course_cached(cache) == load_course()
    assert load_course_cached(cache) == load_course()  # and it was rewritten
