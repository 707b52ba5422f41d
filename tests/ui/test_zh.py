"""tutor in Chinese: the screens a Chinese-reading learner sees (SVG snapshots at 80x24 and
120x36: a reading step, an exercise whose check failed), wide characters wrapping in the
navigator, and the live language switch (F12) that keeps the step, the editor and the results.

The course is the fixed UI test course plus a zh translation written here (guides, titles,
hints), so the snapshots do not move while the real zh guides are being written."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from tutor import i18n
from tutor.course import Course, load_course
from tutor.runner.protocol import Verdict
from tutor.ui.app import TutorApp
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.guide import GuideView
from tutor.ui.widgets.keybar import KeyBar
from tutor.ui.widgets.navigator import StepNavigator, wrap_cells
from tutor.ui.widgets.results import ResultsPanel

from support.courses import build_course
from support.fakes import FakeRunner

from .helpers import text_of
from .test_snapshots import _hints_and_check, _steady

ZH_GUIDES = {
    "02-custom-autograd": {
        "01-why.md": "# 为什么要自己写 Function\n\nautograd 会记录每一步运算。有时你知道一个更省事的反向"
        "传播（backward）公式：比如 sigmoid 的导数可以直接由它的输出算出，不必再保存输入。"
        "这一章教你用 `torch.autograd.Function` 把这样的公式交给 autograd。\n\n"
        "```python\ny = torch.sigmoid(x)\n```\n",
        "02-first-function.md": "# 第一个 Function\n\n跟着打一遍：\n\n```python\n"
        "class Double(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        return 2 * x\n```\n",
        "03-sigmoid.md": "# 复用输出的 sigmoid\n\n`s = sigmoid(x)` 的导数是 `s * (1 - s)`。在 forward "
        "里保存 `s`，在 backward 里用它计算梯度，不必重新计算 `exp`。\n",
        "04-recap.md": "# 小结\n\n你保存的是输出，而不是输入。\n",
    },
    "03-cpp-ops": {
        "01-intro.md": "# 用 C++ 写算子\n\n为什么要写、什么时候值得写。\n",
        "02-add.md": "# CUDA 加法 kernel\n\n在 GPU 上把两个张量相加。\n",
    },
}
ZH_TOML = {
    "02-custom-autograd": """title = "自定义 autograd Function"
summary = "自己写 forward 和 backward。"
[steps.why]
title = "为什么要自己写 Function"
[steps.first-function]
title = "第一个 Function"
[steps.sigmoid]
title = "复用输出的 sigmoid：反向传播只需要前向的结果"
hints = [
  "backward 需要的是 forward 的*输出*，而不是输入。",
  "在 forward 里：`s = torch.sigmoid(x)`，然后 `ctx.save_for_backward(s)`。",
  "在 backward 里：`(s,) = ctx.saved_tensors`，返回 `grad_out * s * (1 - s)`。",
]
[steps.recap]
title = "小结"
""",
    "03-cpp-ops": """title = "自定义 C++ 与 CUDA 算子"
summary = "写你自己的 kernel。"
[steps.intro]
title = "用 C++ 写算子"
[steps.cuda-add]
title = "CUDA 加法 kernel"
hints = ["一", "二", "三"]
""",
}

FAIL = Verdict(
    status="failed",
    reason="x 的梯度与 torch.sigmoid 的不同",
    details=["形状 (32, 10)：320 个元素中有 3 个不同，最大相差 0.25，位于 [4, 7]"],
    output="hello from your code\n",
    duration_s=2.5,
)


@pytest.fixture(scope="session")
def zh_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_course(tmp_path_factory.mktemp("course-zh"))
    for chapter, guides in ZH_GUIDES.items():
        ch = root / "lessons" / chapter
        manifest = ch / "lesson.toml"
        manifest.write_text(manifest.read_text().replace('languages = ["en"]', 'languages = ["en", "zh"]'))
        (ch / "guide" / "zh").mkdir()
        for name, text in guides.items():
            (ch / "guide" / "zh" / name).write_text(text)
        (ch / "i18n").mkdir()
        (ch / "i18n" / "zh.toml").write_text(ZH_TOML[chapter])
    return root


def _loader(root: Path) -> Callable[[str], Course]:
    return lambda lang: load_course(root / "lessons", root / "solutions", lang=lang)


@pytest.fixture
def make_zh_app(zh_root: Path, home: Path) -> Iterator[Callable[..., TutorApp]]:
    """An app as `TUTOR_LANG=zh tutor start` opens it (or in `lang`), over the zh test course."""
    apps: list[TutorApp] = []

    def make(step_id: str, runner: object | None = None, lang: str = "zh") -> TutorApp:
        i18n.set_language(lang)
        kw: dict[str, object] = {"warm_runner": False, "course_loader": _loader(zh_root)}
        if runner is not None:
            kw["runner_factory"] = lambda: runner
        app = TutorApp(_loader(zh_root)(lang), home, 2, step_id, **kw)  # type: ignore[arg-type]
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close_resources()
    i18n.set_language("en")


@pytest.fixture(autouse=True)
def plain_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CodeEditor, "LANGUAGE", None)


SIZES = pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])


@SIZES
def test_zh_read_step(snap_compare, make_zh_app, size) -> None:
    assert snap_compare(make_zh_app("why"), terminal_size=size, run_before=_steady)


@SIZES
def test_zh_exercise_with_a_failed_check(snap_compare, make_zh_app, size) -> None:
    app = make_zh_app("sigmoid", runner=FakeRunner([FAIL]))
    assert snap_compare(app, terminal_size=size, run_before=_hints_and_check(1))


def test_wide_titles_wrap_by_cells_between_characters() -> None:
    lines = wrap_cells("复用输出的 sigmoid：反向传播只需要前向的结果", 16)
    assert all(sum(2 if ord(c) > 0x2E80 else 1 for c in line) <= 16 for line in lines)
    assert "".join(lines).replace(" ", "") == "复用输出的sigmoid：反向传播只需要前向的结果"
    assert not any(line.startswith(("：", "，", "。")) for line in lines)  # never before closing punctuation
    assert wrap_cells("Why write your own Function", 12) == ["Why write", "your own", "Function"]


async def test_navigator_keeps_wide_titles_inside_its_column(make_zh_app) -> None:
    app = make_zh_app("why")
    async with app.run_test(size=(80, 24)) as pilot:
        await _steady(pilot)
        nav = app.main.query_one(StepNavigator)
        width = nav.scrollable_content_region.width
        from rich.cells import cell_len

        for i in range(nav.entry_count):
            prompt = nav.prompt(i)
            assert all(cell_len(line) <= width for line in str(prompt).splitlines()), prompt
        assert "复用输出的" in str(nav.prompt(2))


async def test_f12_switches_language_live_and_keeps_the_work(make_zh_app, home) -> None:
    from tutor.progress import Progress

    # The runner answered in English (the language of the run): the reason stays so.
    english = Verdict(status="failed", reason="gradient of x differs from torch.sigmoid's")
    app = make_zh_app("sigmoid", runner=FakeRunner([english]), lang="en")
    async with app.run_test(size=(120, 36)) as pilot:
        await _steady(pilot)
        main = app.main
        editor = main.query_one("#editor", CodeEditor)
        editor.move_cursor((5, 0))
        await pilot.press("#", " ", "m", "i", "n", "e")
        await pilot.press("ctrl+r")
        results = main.query_one(ResultsPanel)
        for _ in range(500):
            if results.verdict is not None:
                break
            await pilot.pause(0.01)
        banner = lambda: text_of(results.query_one("#results-banner"))  # noqa: E731
        body = lambda: text_of(results.query_one("#results-body"))  # noqa: E731
        assert "FAIL" in banner()
        text, cursor, reason = editor.text, editor.cursor_location, body()
        guide = main.query_one(GuideView)
        assert "Save `s` in forward" in guide.source

        await pilot.press("f12")
        await pilot.pause()
        assert i18n.language() == "zh"
        assert main.step is not None and main.step.id == "sigmoid"
        assert main.step.title.startswith("复用输出的 sigmoid")
        assert editor.text == text and "# mine" in editor.text  # the learner's text, unsaved edits too
        assert editor.cursor_location == cursor
        assert "✘ 未通过" in banner() and "复用输出的 sigmoid" in banner(), banner()
        assert body() == reason and "gradient of x differs" in reason  # the runner's reason, as it came
        assert "在 forward 里保存 `s`" in guide.source
        assert "检查" in text_of(main.query_one(KeyBar))
        assert "步骤 3/4" in text_of(main.query_one("#step-title"))
        assert Progress(home).get_state("lang") == "zh"

        await pilot.press("f12")
        await pilot.pause()
        assert i18n.language() == "en"
        assert "✘ FAIL" in banner() and editor.text == text and editor.cursor_location == cursor
        assert "Check" in text_of(main.query_one(KeyBar))


def test_rich_text_breaks_chinese_between_characters_and_english_at_spaces() -> None:
    import tutor.ui  # noqa: F401  (installs the line breaking)
    from rich.cells import cell_len
    from rich.console import Console
    from rich.text import Text

    console = Console(width=30, file=None, force_terminal=False)
    text = "自动微分（autograd）会记录每一个可微运算，backward() 则逆序遍历这份记录，逐个应用求导规则。"
    lines = [line.plain for line in Text(text).wrap(console, 30)]
    assert "".join(lines) == text  # nothing lost or added
    assert all(cell_len(line.rstrip()) <= 30 for line in lines)
    assert all(cell_len(line.rstrip()) >= 24 for line in lines[:-1])  # full lines, not ragged
    assert not any(line.startswith(("，", "。", "）")) for line in lines)
    english = "Plain English text keeps wrapping at the spaces between its words"
    from tutor.ui import cjk

    assert cjk.divide_line(english, 30) == cjk._rich_divide_line(english, 30) != []  # Rich's own breaks
