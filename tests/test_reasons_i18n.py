"""A checker's reasons in the learner's language: `ctx.t` templates translated by the chapter's
`[reasons]` table, translated targeted hints recognised by their translated words, and the
`tutor dev check` rules that keep both complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor import i18n
from tutor.course import LessonError, load_course
from tutor.course_rules import reason_problems
from tutor.reason_lint import (
    bare_figure_words,
    bare_reasons,
    missing_values,
    mistake_reachable,
    unlabelled_figures,
)
from tutor.runner.client import Runner

MANIFEST = """format_version = 1
title = "Test chapter"

[[steps]]
kind = "exercise"
id = "double"
title = "Double it"
text = "01-double.md"
stub = "exercises/double.py"
solution = "double.py"
checker = "checks/double.py"
hints = ["first", "second", "third"]

[[steps.mistakes]]
when = "tripled"
hint = "You multiplied by three; the task says two."
mutant = [["x * 2", "x * 3"]]
"""

CHECKER = """import torch

def check(ctx):
    x = torch.arange(4.0)
    got = ctx.learner.double(x)
    if torch.equal(got, x * 3):
        ctx.fail(ctx.t("your function tripled {name} instead of doubling it", name="x"))
    ctx.expect_close("double(x)", got, ctx.reference.double(x))
"""

ZH = """title = "测试章"

[steps.double]
mistakes = [{ when = "乘了三", hint = "你乘了三；题目要的是二。" }]

[reasons]
"your function tripled {name} instead of doubling it" = "你的函数把 {name} 乘了三，而不是乘二"
"""


@pytest.fixture
def chapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "course"
    ch = root / "lessons" / "01-test"
    for sub in ("guide/en", "exercises", "checks", "i18n"):
        (ch / sub).mkdir(parents=True)
    (root / "solutions" / "01-test").mkdir(parents=True)
    (ch / "guide" / "en" / "01-double.md").write_text("# Double\n", encoding="utf-8")
    (ch / "exercises" / "double.py").write_text("def double(x):\n    raise NotImplementedError  # TODO\n")
    (ch / "checks" / "double.py").write_text(CHECKER, encoding="utf-8")
    (root / "solutions" / "01-test" / "double.py").write_text("def double(x):\n    return x * 2\n")
    (ch / "lesson.toml").write_text(MANIFEST, encoding="utf-8")
    (ch / "i18n" / "zh.toml").write_text(ZH, encoding="utf-8")
    monkeypatch.setenv("TUTOR_COURSE", str(root))
    yield ch
    i18n.set_language("en")


@pytest.mark.slow
def test_a_failed_check_speaks_the_learners_language_and_finds_the_translated_mistake(chapter, tmp_path):
    wrong = tmp_path / "double.py"
    wrong.write_text("def double(x):\n    return x * 3\n")
    for lang, said in (("en", "your function tripled x instead of doubling it"), ("zh", "你的函数把 x 乘了三")):
        i18n.set_language(lang)
        exercise = load_course(lang=lang).exercise("double")
        with Runner(device="cpu") as runner:
            v = runner.check(exercise, wrong, seed=1)
        assert v.status == "failed", v.reason
        assert said in v.reason
        mistake = exercise.mistake_for(v.reason)
        assert mistake is not None, v.reason
        assert mistake.hint == (
            "你乘了三；题目要的是二。" if lang == "zh" else "You multiplied by three; the task says two."
        )


def test_translated_mistakes_keep_the_english_mutant_and_must_match_in_number(chapter):
    zh = load_course(lang="zh").exercise("double")
    assert [m.when for m in zh.mistakes] == ["乘了三"]
    assert zh.mistakes[0].mutant == (("x * 2", "x * 3"),)
    (chapter / "i18n" / "zh.toml").write_text("[steps.double]\nmistakes = []\n", encoding="utf-8")
    with pytest.raises(LessonError, match=r"steps.double.mistakes: has 0 entries, the English manifest has 1"):
        load_course(lang="zh")


def test_a_translated_reason_must_keep_the_english_fields(chapter):
    (chapter / "i18n" / "zh.toml").write_text(
        '[reasons]\n"your function tripled {name} instead of doubling it" = "你的函数乘了三 {what}"\n',
        encoding="utf-8",
    )
    with pytest.raises(LessonError) as info:
        load_course(lang="zh")
    assert "lessons/01-test/i18n/zh.toml: reasons." in str(info.value)
    assert "uses the fields ['what'], the English uses ['name']" in str(info.value)


def test_dev_check_names_bare_untranslated_unused_and_unreachable_reasons(chapter):
    assert reason_problems(load_course()) == []
    (chapter / "checks" / "double.py").write_text(
        CHECKER.replace(
            'ctx.fail(ctx.t("your function tripled {name} instead of doubling it", name="x"))',
            'ctx.fail(f"tripled {x}")\n    ctx.expect(True, ctx.t("a new reason"))',
        ),
        encoding="utf-8",
    )
    problems = reason_problems(load_course())
    joined = "\n".join(problems)
    assert "checks/double.py:7: the text f'tripled {x}' is not written through ctx.t" in joined
    assert "checks/double.py:8: reason not translated to zh: 'a new reason'" in joined
    assert "[reasons] 'your function tripled {name} instead of doubling it' is used by no checker" in joined
    assert "steps.double.mistakes[0].when '乘了三' is in no zh reason" in joined


def test_bare_reason_rule_accepts_names_and_ctx_t_and_flags_literals():
    source = 'ctx.expect(ok, why)\nctx.expect(ok, ctx.t("fine"))\nctx.fail("plain")\nctx.expect(ok, f"x{y}")\n'
    assert [r.line for r in bare_reasons(source, Path("c.py"))] == [3, 4]


def test_progress_texts_are_translatable_too():
    source = (
        'ctx.phase("compiling")\n'
        'with ctx.build(f"building {name}"):\n    pass\n'
        "for i in ctx.trials(3):\n    pass\n"
        'for i in ctx.trials(3, "calling it"):\n    pass\n'
        'ctx.phase(ctx.t("fine"))\n'
    )
    assert [r.line for r in bare_reasons(source, Path("c.py"))] == [1, 2, 6]


def test_mistake_words_must_lie_in_the_fixed_text_of_a_reason():
    assert mistake_reachable("乘了三", ["你的函数把 {name} 乘了三，而不是乘二"])
    assert not mistake_reachable("name", ["你的函数把 {name} 乘了三"])


def test_a_template_field_without_a_value_is_named():
    source = 'ctx.t("{n} of {m}", n=1)\nctx.t("{n}", **vals)\nctx.t("plain {x:.1f}", x=2.0)\n'
    assert [(r.line, r.text) for r in missing_values(source, Path("c.py"))] == [(1, "m")]


def test_a_figures_words_go_through_ctx_t():
    source = (
        'ctx.time(f, g, compares="yours vs the loop")\n'  # 1: a bare compares
        'ctx.time(f, g, compares=ctx.t("yours vs the loop"), sides=(ctx.t("yours"), "the loop"))\n'  # 2: one side
        'ctx.memory(f, g, sides=[f"{n} rows", ctx.t("eager")])\n'  # 3: an f-string side
        'ctx.figure("graphs", 3, label="graphs compiled")\n'  # 4: a bare label
        'with ctx.build(ctx.t("compiling"), figure="compile_s", label=f"compile {x}"):\n    pass\n'  # 5
        'ctx.time(f, g, compares=ctx.t("a"), sides=(ctx.t("b"), ctx.t("c")), label=ctx.t("d"))\n'  # 7: fine
        "ctx.time(f, g, compares=words, sides=names)\n"  # 8: names, not knowable here: fine
        'ctx.figure("peak", {"learner_bytes": 1, "reference_bytes": 2, "compares": f"yours vs {it}"})\n'  # 9
        'ctx.figure("peak", {"learner_bytes": 1, "reference_bytes": 2, "sides": [ctx.t("a"), ctx.t("b")]})\n'
    )
    found = [(r.line, r.text) for r in bare_figure_words(source, Path("c.py"))]
    assert found == [
        (1, "compares='yours vs the loop'"),
        (2, "sides='the loop'"),
        (3, "sides=f'{n} rows'"),
        (4, "label='graphs compiled'"),
        (5, "label=f'compile {x}'"),
        (9, "compares=f'yours vs {it}'"),
    ]


def test_a_figure_the_checker_names_needs_a_label():
    source = (
        'ctx.figure("graphs", 3)\n'  # 1: flagged
        'ctx.figure(f"plan_{trial}", plan, label=ctx.t("plan {n}", n=trial))\n'
        "ctx.time(f, g)\n"  # the default name: the results panel translates it
        'ctx.time(f, g, name="time", compares=ctx.t("x"))\n'
        'ctx.time(f, g, name="reference_vs_loop", compares=ctx.t("x"))\n'  # 5: flagged
        'ctx.memory(f, g, name="peak", label=ctx.t("peak"))\n'
        'with ctx.build(ctx.t("compiling")):\n    pass\n'  # build_s, the default
        'with ctx.build(ctx.t("compiling"), figure="compile_s"):\n    pass\n'  # 9: flagged
        'with ctx.build(ctx.t("compiling"), "export_s"):\n    pass\n'  # 11: flagged (positional)
        "plt.figure()\n"  # not a checker's figure
        'ctx.figure("x", 1, **more)\n'  # not knowable here
    )
    assert [(r.line, r.text) for r in unlabelled_figures(source, Path("c.py"))] == [
        (1, "'graphs'"),
        (5, "'reference_vs_loop'"),
        (9, "'compile_s'"),
        (11, "'export_s'"),
    ]


def test_dev_check_names_untranslated_figure_words_by_file_and_line(chapter):
    (chapter / "checks" / "double.py").write_text(
        CHECKER
        + '    ctx.time(lambda: got, lambda: x, name="vs x", compares="yours vs x", sides=(ctx.t("yours"), "x"))\n'
        + '    ctx.figure("doubled", 2, label=ctx.t("doubled values"))\n',
        encoding="utf-8",
    )
    joined = "\n".join(reason_problems(load_course()))
    assert "checks/double.py:9: the figure text compares='yours vs x' is not written through ctx.t" in joined
    assert "checks/double.py:9: the figure text sides='x' is not written through ctx.t" in joined
    assert "checks/double.py:9: the figure 'vs x' has no label=ctx.t(...)" in joined
    assert "checks/double.py:10: reason not translated to zh: 'doubled values'" in joined  # a label is a reason
    assert "checks/double.py:10: the figure" not in joined
