"""`tutor dev check` and translations: code blocks identical in every language (a failure),
steps not yet translated listed (a warning only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor import zh_lint
from tutor.course import load_course
from tutor.course_rules import (
    emphasis_problems,
    stale_translations,
    translation_problems,
    untranslated_report,
    zh_problems,
)

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
block = 1
"""

EN_TYPING = """# Typing

First a small one:

```python
x = 1
```

Then the passage:

```python run
import math

# the circle's area
print(math.pi * 2.0 ** 2)
```
"""

ZH_TYPING = (
    EN_TYPING.replace("# Typing", "# 跟着敲")
    .replace("First a small one:", "先来一个小例子：")
    .replace("Then the passage:", "然后是要敲的代码：")
)


@pytest.fixture
def chapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "course"
    ch = root / "lessons" / "01-basics"
    (ch / "guide" / "en").mkdir(parents=True)
    (ch / "guide" / "zh").mkdir(parents=True)
    (ch / "i18n").mkdir()
    (root / "solutions" / "01-basics").mkdir(parents=True)
    (ch / "lesson.toml").write_text(MANIFEST, encoding="utf-8")
    (ch / "guide" / "en" / "01-intro.md").write_text("# Intro\n\nNo code here.\n", encoding="utf-8")
    (ch / "guide" / "en" / "02-typing.md").write_text(EN_TYPING, encoding="utf-8")
    (ch / "guide" / "zh" / "02-typing.md").write_text(ZH_TYPING, encoding="utf-8")
    monkeypatch.setenv("TUTOR_COURSE", str(root))
    return ch


def zh_typing(chapter: Path, text: str) -> list[str]:
    (chapter / "guide" / "zh" / "02-typing.md").write_text(text, encoding="utf-8")
    return translation_problems(load_course())


def test_identical_code_with_translated_prose_is_fine(chapter):
    assert translation_problems(load_course()) == []


def test_a_translated_comment_inside_code_is_a_problem(chapter):
    problems = zh_typing(chapter, ZH_TYPING.replace("# the circle's area", "# 圆的面积"))
    assert problems == [
        (
            "lessons/01-basics/guide/zh/02-typing.md: python block 1: differs from "
            "guide/en/02-typing.md at line 3 ('# 圆的面积' instead of \"# the circle's area\"); "
            "copy the English block unchanged"
        )
    ]


def test_a_missing_block_and_a_different_fence_are_problems(chapter):
    one_block = ZH_TYPING.replace("```python\nx = 1\n```\n", "")
    assert zh_typing(chapter, one_block) == [
        (
            "lessons/01-basics/guide/zh/02-typing.md: has 1 python code block(s), guide/en/02-typing.md has 2; "
            "code must be the same in every language"
        )
    ]
    not_run = ZH_TYPING.replace("```python run", "```python")
    assert zh_typing(chapter, not_run) == [
        (
            "lessons/01-basics/guide/zh/02-typing.md: python block 1: fenced as ```python, "
            "the English one as ```python run"
        )
    ]


def test_trailing_whitespace_or_a_changed_number_is_caught(chapter):
    assert zh_typing(chapter, ZH_TYPING.replace("2.0 ** 2", "2.0 ** 3"))
    assert zh_typing(chapter, ZH_TYPING.replace("x = 1\n", "x = 1 \n"))


def test_untranslated_steps_are_warnings_and_a_broken_file_a_problem(chapter):
    problems, warnings = untranslated_report()
    assert problems == []
    assert warnings == [
        "01-basics: no zh title, summary",
        "01-basics/intro: no zh guide, title",
        "01-basics/typing: no zh title",
    ]
    (chapter / "i18n" / "zh.toml").write_text('[steps.typo]\ntitle = "x"\n', encoding="utf-8")
    problems, warnings = untranslated_report()
    assert problems == ["lessons/01-basics/i18n/zh.toml: steps.typo: no step 'typo' in 01-basics/lesson.toml"]


def test_a_translation_missing_a_bullet_the_english_gained_is_flagged_stale(chapter):
    assert stale_translations(load_course()) == []
    english = chapter / "guide" / "en" / "02-typing.md"
    english.write_text(
        EN_TYPING.replace("Then the passage:", "Then the passage:\n\n- it prints\n- an area"), encoding="utf-8"
    )
    assert stale_translations(load_course()) == [
        "lessons/01-basics/guide/zh/02-typing.md: 0 list item(s), the English 2: the translation may be out of date"
    ]
    english.write_text(EN_TYPING, encoding="utf-8")
    # Code does not count (the `# the circle's area` comment is not a heading); a new section does.
    zh = chapter / "guide" / "zh" / "02-typing.md"
    zh.write_text(ZH_TYPING + "\n## 小结\n", encoding="utf-8")
    assert stale_translations(load_course()) == [
        "lessons/01-basics/guide/zh/02-typing.md: 2 heading(s), the English 1: the translation may be out of date"
    ]


def test_emphasis_markdown_leaves_as_asterisks_is_a_problem(chapter):
    zh = chapter / "guide" / "zh" / "02-typing.md"
    zh.write_text(
        ZH_TYPING.replace("先来一个小例子：", "张量必须是**连续（contiguous）**的：\\*号照写，*x*"), encoding="utf-8"
    )
    assert emphasis_problems(load_course()) == [
        (
            "lessons/01-basics/guide/zh/02-typing.md: emphasis shown as literal asterisks in "
            "'张量必须是**连续（contiguous）**的：': Markdown does not close ** next to full-width "
            "punctuation; put a gloss after the closing marker (**术语**（term）)"
        )
    ]
    zh.write_text(ZH_TYPING.replace("先来一个小例子：", "张量必须是**连续**（contiguous）的："), encoding="utf-8")
    assert emphasis_problems(load_course()) == []


def test_no_guide_in_any_language_shows_literal_asterisks(monkeypatch):
    monkeypatch.delenv("TUTOR_COURSE", raising=False)
    problems = emphasis_problems(load_course(ROOT / "lessons", ROOT / "solutions"))
    assert not problems, "\n".join(problems)


ZH_GUIDE = "lessons/01-basics/guide/zh/02-typing.md"


def zh_page(chapter: Path, prose: str) -> list[str]:
    """The zh problems of the typing page with `prose` as its line 3 (and on, if several)."""
    (chapter / "guide" / "zh" / "02-typing.md").write_text(
        ZH_TYPING.replace("先来一个小例子：", prose), encoding="utf-8"
    )
    return zh_problems(load_course())


@pytest.mark.parametrize(
    ("bad", "good", "term"),
    [
        ("AOTAutograd 做降级（lowering）", "AOTAutograd 做下沉（lowering），pip 把 torch 降级到 2.4", "下沉"),
        ("非 reentrant 的实现", "非可重入（non-reentrant）的实现：`use_reentrant=False`", "可重入 / 非可重入"),
        ("每个运算都被分派到批处理规则上", "每个运算都被分发到批处理规则上", "分发 / 分发器"),
        ("墙钟时间还包含了开销", "挂钟时间（wall-clock time）还包含了开销", "挂钟时间"),
        ("融合成 int8 内核", "融合成 int8 kernel，与 Linux 内核无关", "kernel"),
        ("带或不带 int8 激活", "先激活虚拟环境，再激活 `.venv`；int8 激活值、激活检查点和激活函数", "激活值"),
        ("大尺寸下的黑塞矩阵-向量积", "大尺寸下的黑塞-向量积，不构造黑塞矩阵", "黑塞-向量积"),
        ("海森矩阵是对称的", "黑塞矩阵是对称的", "黑塞矩阵"),
        ("Adam 的两个动量缓冲区", "Adam 的两个矩估计；SGD 的动量缓冲区", "矩估计"),
    ],
)
def test_a_rejected_zh_term_is_a_problem_naming_the_glossary_term(chapter, bad, good, term):
    problems = zh_page(chapter, bad + "。")
    assert len(problems) == 1 and problems[0].startswith(f"{ZH_GUIDE}:3: ")
    assert problems[0].endswith(f"write {term}")
    assert zh_page(chapter, good + "。") == []


def test_zh_catalogue_values_are_checked_and_their_english_keys_are_not(chapter):
    (chapter / "i18n" / "zh.toml").write_text(
        '# zh: terms in docs/GLOSSARY.zh.md\n[steps.typing]\ntitle = "Python 分派"\n\n[reasons]\n'
        '"the reentrant one (dispatching)" = "可重入的实现（在分发之前）"\n',
        encoding="utf-8",
    )
    assert zh_problems(load_course()) == [
        "lessons/01-basics/i18n/zh.toml:3: '分派' is not the glossary's term for dispatch / dispatcher: write 分发 / 分发器"
    ]
    po = 'msgid "wall-clock time"\nmsgstr ""\n"墙钟时间"\n\nmsgid "the reentrant one"\nmsgstr "可重入的那个"\n'
    assert [n for n, _ in zh_lint.strings_problems(zh_lint.po_strings(po))] == [3]


def test_a_line_break_inside_a_chinese_paragraph_is_a_problem(chapter):
    problems = zh_page(chapter, "第一句，\n第二句接着写。\n- 列表项\n  接着写")
    assert problems == [
        f"{ZH_GUIDE}:3: a line break inside a Chinese paragraph shows as a space: join line 4 onto this one",
        f"{ZH_GUIDE}:5: a line break inside a Chinese paragraph shows as a space: join line 6 onto this one",
    ]
    # One line per paragraph, list items on their own lines, and a break after code are fine.
    assert zh_page(chapter, "第一句，第二句接着写。\n\n- 列表项\n- 第二项\n\n调用 `f`\nthen English") == []


def test_a_space_after_full_width_punctuation_is_a_problem(chapter):
    problems = zh_page(chapter, "**测量。** GPU 上看计数器，\n1. **版本：** `torch` 2.13")
    assert [p.split(": ", 1)[0] for p in problems] == [f"{ZH_GUIDE}:3", f"{ZH_GUIDE}:4"]
    assert "a space after '。' shows in the text" in problems[0]
    assert zh_page(chapter, "**测量**。GPU 上看计数器，\n\n1. **版本**：`torch` 2.13") == []


def test_brackets_inside_brackets_are_a_problem(chapter):
    problems = zh_page(chapter, "按参数名作为键（练习：批（batch）大小只允许 1 到 100）")
    assert len(problems) == 1 and problems[0].startswith(f"{ZH_GUIDE}:3: brackets inside brackets near ")
    good = "按参数名作为键；练习中批（batch）大小只允许 1 到 100（调用 torch.set_num_threads(1)），`f((x,))`"
    assert zh_page(chapter, good) == []
    assert zh_lint.strings_problems(iter([(7, "pl.Trainer(clip=max_norm（默认）, x=1)")]))[0][0] == 7


def test_a_zh_page_or_hint_quoting_the_english_ui_is_a_problem(chapter):
    (chapter / "i18n" / "zh.toml").write_text(
        '[steps.typing]\ntitle = "跟着敲"\n\n[reasons]\n"building your C++ extension…" = "正在构建你的 C++ 扩展…"\n'
        '"torch.library.opcheck" = "用 torch.library.opcheck 检查"\n"the loop" = "循环"\n',
        encoding="utf-8",
    )
    # tutor's catalogue ("ref" -> 参考, "needs a CUDA GPU") and the checker's strings, quoted in
    # backticks or quotation marks; the ellipsis may be left off.
    problems = zh_page(chapter, '其中 “ref” 行是循环，`needs a CUDA GPU`；阶段显示为 "building your C++ extension"。')
    assert problems == [
        f"{ZH_GUIDE}:3: quotes the English UI string 'building your C++ extension': the zh app shows '正在构建你的 C++ 扩展…'",
        f"{ZH_GUIDE}:3: quotes the English UI string 'needs a CUDA GPU': the zh app shows '需要一块 CUDA GPU'",
        f"{ZH_GUIDE}:3: quotes the English UI string 'ref': the zh app shows '参考'",
    ]
    # What the zh app shows; a code name its Chinese keeps; code blocks; words not quoted.
    fine = (
        "其中“参考”行，`torch.library.opcheck` 检查，ref 与 the loop 不加引号。\n\n```python\nx = 'ref'  # `ref`\n```"
    )
    assert zh_page(chapter, fine) == []
    # The zh hints of the chapter's zh.toml too.
    assert zh_lint.strings_quote_problems(iter([(2, "看“the loop”那一行")]), {"the loop": "循环"}) == [
        (2, "quotes the English UI string 'the loop': the zh app shows '循环'")
    ]


STUB = """def f(x):
    # TODO: return a NEW tensor. Watch out:
    #       x may be transposed.
    y = x  # a comment that is no TODO
    // TODO 2: reject float64
    raise NotImplementedError("TODO: implement f")
"""


def test_each_todo_of_a_stub_is_stated_in_the_zh_exercise_page():
    assert zh_lint.todo_comments(STUB) == ["return a NEW tensor. Watch out: x may be transposed.", "reject float64"]
    marker = zh_lint.TASK_MARKER
    good = f"# 练习\n\n正文。\n\n{marker}：对照。\n\nTODO 1（`f`）：返回一个新张量。\n\nTODO 2：拒绝 float64。\n"
    assert zh_lint.task_problems(good, STUB) == []
    assert "no **起始代码中的 TODO** block: the stub has 2 TODO" in zh_lint.task_problems("# 练习\n", STUB)[0]
    missing = good.replace("\n\nTODO 2：拒绝 float64。", "")
    assert "the paragraphs TODO [1], the stub 2 TODO comment(s)" in zh_lint.task_problems(missing, STUB)[0]
    swapped = good.replace("TODO 1（`f`）", "TODO 3（`f`）")
    assert zh_lint.task_problems(swapped, STUB) != []
    assert zh_lint.task_problems("# 练习\n", "def f():\n    return 1\n") == []  # no TODO, no block needed


def test_the_real_zh_course_follows_the_glossary_and_cjk_layout(monkeypatch):
    monkeypatch.delenv("TUTOR_COURSE", raising=False)
    problems = zh_problems(load_course(ROOT / "lessons", ROOT / "solutions"))
    assert not problems, "\n".join(problems)


def test_every_enforced_term_is_in_the_glossary():
    glossary = (ROOT / "docs" / "GLOSSARY.zh.md").read_text(encoding="utf-8")
    missing = [u for t in zh_lint.TERMS for u in t.use.split(" / ") if u not in glossary]
    assert not missing


def run_dev_check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TUTOR_HOME=str(tmp_path / "home"), COLUMNS="200")
    env.pop("PYTHONUNBUFFERED", None)
    return subprocess.run(
        [sys.executable, "-m", "tutor", "dev", "check", "--no-run", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
        check=False,
    )


def test_dev_check_warns_about_untranslated_steps_without_failing(chapter, tmp_path):
    done = run_dev_check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "01-basics/intro: no zh guide, title" in done.stdout
    assert "3 translation warning(s), 0 problem(s)" in done.stdout
    data = json.loads(run_dev_check(tmp_path, "--json").stdout)
    assert data["problems"] == [] and len(data["translation_warnings"]) == 3


def test_dev_check_fails_when_code_drifts_between_languages(chapter, tmp_path):
    (chapter / "guide" / "zh" / "02-typing.md").write_text(
        ZH_TYPING.replace("import math", "import math as m"), encoding="utf-8"
    )
    done = run_dev_check(tmp_path)
    assert done.returncode == 1
    assert "✗ lessons/01-basics/guide/zh/02-typing.md: python block 1: differs" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_real_course_has_the_same_code_in_every_language(monkeypatch):
    monkeypatch.delenv("TUTOR_COURSE", raising=False)
    problems = translation_problems(load_course(ROOT / "lessons", ROOT / "solutions"))
    assert not problems, "\n".join(problems)
