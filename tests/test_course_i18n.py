"""The course in another language: guides from guide/<lang>/, titles, summaries and hints from
i18n/<lang>.toml, English wherever a field has no translation, and `untranslated()` naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course import Exercise, LessonError, available_languages, load_course

ROOT = Path(__file__).resolve().parents[1]

MANIFEST = """format_version = 1
title = "Test chapter"
summary = "A summary."

[[steps]]
kind = "read"
id = "intro"
title = "Intro"
text = "01-intro.md"

[[steps]]
kind = "passage"
id = "typing"
title = "Type this"
text = "02-typing.md"

[[steps]]
kind = "exercise"
id = "ex-one"
title = "One"
text = "03-one.md"
stub = "exercises/one.py"
solution = "one.py"
checker = "checks/one.py"
hints = ["first", "second", "third"]
"""

FULL_ZH = """title = "测试章"
summary = "一句摘要。"

[steps.intro]
title = "介绍"

[steps.typing]
title = "跟着敲"

[steps.ex-one]
title = "练习一"
hints = ["第一条", "第二条", "第三条"]
"""


@pytest.fixture
def chapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "course"
    ch = root / "lessons" / "03-cpp-ops"
    for sub in ("guide/en", "guide/zh", "exercises", "checks", "i18n"):
        (ch / sub).mkdir(parents=True)
    (root / "solutions" / "03-cpp-ops").mkdir(parents=True)
    for name, heading in (("01-intro.md", "Intro"), ("02-typing.md", "Typing"), ("03-one.md", "One")):
        (ch / "guide" / "en" / name).write_text(f"# {heading}\n\n```python\nx = 1\n```\n", encoding="utf-8")
    (ch / "guide" / "zh" / "01-intro.md").write_text("# 介绍\n\n```python\nx = 1\n```\n", encoding="utf-8")
    (ch / "exercises" / "one.py").write_text("# TODO\n")
    (ch / "checks" / "one.py").write_text("def check(ctx):\n    pass\n")
    (root / "solutions" / "03-cpp-ops" / "one.py").write_text("")
    (ch / "lesson.toml").write_text(MANIFEST, encoding="utf-8")
    monkeypatch.setenv("TUTOR_COURSE", str(root))
    return ch


def write_zh(chapter: Path, text: str) -> None:
    (chapter / "i18n" / "zh.toml").write_text(text, encoding="utf-8")


def zh_error(chapter: Path, text: str) -> str:
    write_zh(chapter, text)
    with pytest.raises(LessonError) as info:
        load_course(lang="zh")
    return str(info.value)


def test_zh_guide_is_read_where_it_exists_and_english_elsewhere(chapter):
    course = load_course(lang="zh")
    intro, typing, _one = course.chapter(3).steps
    assert intro.text().startswith("# 介绍")
    assert typing.text().startswith("# Typing")  # no guide/zh/02-typing.md
    assert intro.text("en").startswith("# Intro")  # asking for a language still works
    assert typing.code() == "x = 1\n"


def test_english_course_is_unchanged_by_a_translation(chapter):
    write_zh(chapter, FULL_ZH)
    course = load_course()
    ch = course.chapter(3)
    assert course.language == "en" and ch.title == "Test chapter"
    assert ch.steps[0].text().startswith("# Intro") and ch.steps[0].title == "Intro"
    assert course.exercise("ex-one").hints == ("first", "second", "third")
    assert course.untranslated() == []


def test_titles_summary_and_hints_come_from_the_i18n_file(chapter):
    write_zh(chapter, FULL_ZH)
    course = load_course(lang="zh")
    ch = course.chapter(3)
    assert (ch.title, ch.summary) == ("测试章", "一句摘要。")
    assert [s.title for s in ch.steps] == ["介绍", "跟着敲", "练习一"]
    assert course.exercise("ex-one").hints == ("第一条", "第二条", "第三条")


def test_each_missing_field_falls_back_to_english_on_its_own(chapter):
    write_zh(chapter, 'summary = "只有摘要"\n\n[steps.ex-one]\ntitle = "练习一"\n')
    course = load_course(lang="zh")
    ch = course.chapter(3)
    assert (ch.title, ch.summary) == ("Test chapter", "只有摘要")
    assert [s.title for s in ch.steps] == ["Intro", "Type this", "练习一"]
    ex = course.exercise("ex-one")
    assert isinstance(ex, Exercise) and ex.hints == ("first", "second", "third")


def test_untranslated_names_every_field_still_in_english(chapter):
    course = load_course(lang="zh")  # a guide for intro only, no i18n file
    assert [str(u) for u in course.untranslated()] == [
        "03-cpp-ops: no zh title, summary",
        "03-cpp-ops/intro: no zh title",
        "03-cpp-ops/typing: no zh guide, title",
        "03-cpp-ops/ex-one: no zh guide, title, hints",
    ]
    write_zh(chapter, FULL_ZH)
    for name in ("02-typing.md", "03-one.md"):
        (chapter / "guide" / "zh" / name).write_text("# 译文\n\n```python\nx = 1\n```\n", encoding="utf-8")
    assert load_course(lang="zh").untranslated() == []


@pytest.mark.parametrize(
    "text,message",
    [
        ('[steps.outro]\ntitle = "结尾"\n', "steps.outro: no step 'outro' in 03-cpp-ops/lesson.toml"),
        ('titel = "测试章"\n', "titel: unknown key; expected one of title, summary, steps, reasons"),
        (
            '[steps.intro]\ntitle = "介绍"\nhint = ["x"]\n',
            "steps.intro.hint: unknown key; expected one of title, hints, mistakes",
        ),
        (
            '[steps.intro]\nhints = ["a", "b", "c"]\n',
            "steps.intro.hints: only exercises have hints; 'intro' is a read step",
        ),
        (
            '[steps.ex-one]\nhints = ["一", "二"]\n',
            "steps.ex-one.hints: has 2 hints, the English manifest has 3; translate each English hint once",
        ),
        ('[steps.ex-one]\nhints = ["一", "", "三"]\n', "steps.ex-one.hints[1]: must be a non-empty string"),
        ('[steps.ex-one]\nhints = "一"\n', "steps.ex-one.hints: must be a list"),
        ('[steps.intro]\ntitle = "  "\n', "steps.intro.title: must not be empty"),
        ("title = 3\n", "title: must be a string"),
        ("steps = 3\n", "steps: must be a table of step ids"),
        ('steps = { intro = "介绍" }\n', "steps.intro: must be a table"),
    ],
)
def test_translation_errors_name_the_file_and_the_field(chapter, text, message):
    error = zh_error(chapter, text)
    assert error == "lessons/03-cpp-ops/i18n/zh.toml: " + message


def test_invalid_toml_in_a_translation_is_one_line(chapter):
    error = zh_error(chapter, 'title = = "x"\n')
    assert error.startswith("lessons/03-cpp-ops/i18n/zh.toml: not valid TOML")
    assert "\n" not in error
    load_course()  # the English course does not read the zh file


def test_language_codes_are_checked_before_they_become_paths(chapter):
    for bad in ("../en", "zh/", "", "Chinese"):
        with pytest.raises(ValueError, match="not a language code"):
            load_course(lang=bad)


def test_available_languages_lists_english_first(chapter, tmp_path):
    assert available_languages() == ("en", "zh")
    (chapter / "i18n" / "ja.toml").write_text('title = "テスト"\n', encoding="utf-8")
    assert available_languages() == ("en", "ja", "zh")


def test_the_real_course_loads_in_chinese(monkeypatch):
    monkeypatch.delenv("TUTOR_COURSE", raising=False)
    en = load_course(ROOT / "lessons", ROOT / "solutions")
    zh = load_course(ROOT / "lessons", ROOT / "solutions", lang="zh")
    assert [c.slug for c in zh.chapters] == [c.slug for c in en.chapters]
    assert zh.exercise_ids() == en.exercise_ids()
    # A step whose zh guide exists reads it; code is the same in both languages.
    translated = [s for s in zh.steps() if "zh" in s.texts]
    assert translated, "no zh guide in the course yet"
    for step in translated:
        assert step.text() == step.texts["zh"].read_text(encoding="utf-8")


def test_chinese_hints_offer_the_same_code_as_the_english():
    """Tab inserts a hint's first code span as ghost text: a translation must offer the same."""
    from tutor.ui.widgets.hints import code_suggestion

    en = load_course(ROOT / "lessons", ROOT / "solutions")
    zh = load_course(ROOT / "lessons", ROOT / "solutions", lang="zh")
    for a, b in zip(en.exercises, zh.exercises):
        assert len(a.hints) == len(b.hints), a.key
        for i, (h_en, h_zh) in enumerate(zip(a.hints, b.hints)):
            assert code_suggestion(h_en) == code_suggestion(h_zh), f"{a.key} hint {i + 1}"
