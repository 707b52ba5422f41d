"""The plain-Python parts: statuses, figures, bars, diffs, debouncing, hint code."""

from __future__ import annotations

from pathlib import Path

from tutor.progress import ExerciseProgress
from tutor.editor_file import Debouncer, EditorFile
from tutor.ui.figures import bar, figures_view, fmt_bytes, fmt_seconds
from tutor.ui.screens.solution import side_by_side
from tutor.steps import (
    Snapshot,
    chapter_label,
    chapter_progress_label,
    first_step_to_do,
    overall_label,
    step_status,
)
from tutor.ui.widgets.hints import code_suggestion
from tutor.workspace import Workspace

from .helpers import plain


def rec(ex: str, status: str) -> ExerciseProgress:
    return ExerciseProgress(ex, status, 0, 1.0, None)


def test_step_status_and_labels(course) -> None:
    ch2, ch3 = course.chapters
    empty = Snapshot({}, set())
    assert [step_status(s, empty) for s in ch2.steps] == ["read", "new", "new", "read"]
    snap = Snapshot({"sigmoid": rec("sigmoid", "passed")}, {"02-custom-autograd/first-function"})
    assert [step_status(s, snap) for s in ch2.steps] == ["read", "done", "passed", "read"]
    assert step_status(ch3.steps[1], empty) == "cuda"
    assert step_status(ch3.steps[1], Snapshot({}, set(), gpus=1)) == "new"
    assert chapter_label(course, ch3) == "Ch 3/3 · Custom C++ and CUDA operators"
    assert overall_label(course, snap) == "1/2 exercises passed in the course"
    assert chapter_progress_label(ch2, snap) == "1/1 exercises passed"


def test_first_step_to_do(course) -> None:
    ch2 = course.chapters[0]
    assert first_step_to_do(ch2, Snapshot({}, set())).id == "why"
    started = Snapshot({"sigmoid": rec("sigmoid", "started")}, {"02-custom-autograd/first-function"})
    assert first_step_to_do(ch2, started).id == "sigmoid"


def test_formatting_and_bars() -> None:
    assert fmt_seconds(1.5) == "1.50 s" and fmt_seconds(0.0025) == "2.50 ms"
    assert fmt_seconds(2e-6) == "2.0 µs"
    assert fmt_bytes(512) == "512 B" and fmt_bytes(3 * 1024**2) == "3.0 MiB"
    assert bar(10, 10, 8) == "█" * 8 and bar(5, 10, 8) == "█" * 4 and bar(0, 10) == ""
    assert bar(1, 16, 1) == "▏"


def test_figures_view_handles_every_kind() -> None:
    view = figures_view(
        {
            "time": {"learner_s": 2.0, "reference_s": 1.0, "speedup": 0.5, "noisy": True},
            "memory": {"learner_bytes": 2048, "reference_bytes": 1024},
            "compile_s": 3.0,
            "custom": {"a": 1.23456},
            "count": 3,
        }
    )
    text = plain(view, 60)
    for want in (
        "yours",
        "ref",
        "2.00 s",
        "too noisy to call",
        "2.0 KiB",
        "2.00× the reference",
        "compile",
        "3.00 s",
        "a 1.235",
        "count",
    ):
        assert want in text, want
    assert "speedup" not in text  # noisy: no confident number
    assert figures_view({}) is None


def test_figure_dicts_read_units_from_their_keys() -> None:
    import math

    cost = {"compile_s": 0.1686, "eager_ms": 0.3859, "speedup": 1.036, "break_even_calls": 12460.3, "never": math.inf}
    text = " ".join(plain(figures_view({"the block: your compile cost": cost}), 200).split())
    for want in ("compile 168.60 ms", "eager 385.9 µs", "speedup 1.04×", "break even calls 12,460", "never ∞"):
        assert want in text, (want, text)
    assert "e+" not in text and "compile s" not in text


def test_speedup_is_the_ratio_of_the_times_shown() -> None:
    # The old panel showed `you 2.72 ms / ref 2.46 ms / speedup 0.97x` (another statistic).
    text = plain(
        figures_view({"time": {"learner_s": 2.72e-3, "reference_s": 2.46e-3, "speedup": 0.97, "noisy": False}}), 60
    )
    assert "2.72 ms" in text and "2.46 ms" in text
    assert "speedup 0.90×" in text and "yours is slower" in text
    text = plain(
        figures_view({"time": {"learner_s": 1.28e-3, "reference_s": 31.29e-3, "speedup": 1.02, "noisy": False}}), 60
    )
    assert "speedup 24.45×" in text and "yours is faster" in text


def test_noisy_time_says_why_and_labels_are_never_cut() -> None:
    figures = {
        "time_per_call": {
            "learner_s": 0.01,
            "reference_s": 0.02,
            "speedup": 2.0,
            "noisy": True,
            "noise_reason": "rounds spread over 40%; the machine is busy",
            "compares": "yours vs the reference solution",
        },
        "peak_memory": {
            "learner_bytes": 79 * 2**20,
            "reference_bytes": 40 * 2**20,
            "compares": "yours vs the reference, both with checkpointing",
        },
    }
    for width in (38, 80):
        text = " ".join(plain(figures_view(figures), width).split())  # undo the wrapping
        assert "too noisy to call: rounds spread over 40%; the machine is busy" in text
        assert "time per call · yours vs the reference solution" in text
        assert "peak memory · yours vs the reference, both with checkpointing" in text
        assert "79.0 MiB" in text and "40.0 MiB" in text and "1.98× the reference's" in text
        assert "…" not in text


def test_side_by_side_diff() -> None:
    table = side_by_side("a\nb\nc\n", "a\nB\nc\nd\n")
    lines = plain(table, 60).splitlines()
    assert any("b" in line and "B" in line for line in lines)
    assert any(line.rstrip().endswith("d") for line in lines)


def test_debouncer_quiet_and_cap() -> None:
    d = Debouncer(quiet=0.5, cap=1.0)
    assert d.touch(10.0) == 0.5
    assert d.touch(10.4) == 0.5
    assert abs(d.touch(10.8) - 0.2) < 1e-9  # never later than 1 s after the first keystroke
    assert d.touch(11.5) == 0.0
    d.clear()
    assert d.touch(20.0) == 0.5


def test_editor_file_conflicts(course, tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    f = EditorFile(ws, course.exercise("sigmoid"))
    text = f.load()
    assert f.save(text) == "unchanged"
    assert f.save("mine\n") == "saved" and f.path.read_text() == "mine\n"
    f.path.write_text("theirs\n")
    import os

    os.utime(f.path, ns=(1, 1))
    assert f.changed_on_disk() == "theirs\n"
    assert f.save("mine 2\n") == "conflict" and f.path.read_text() == "theirs\n"
    f.ignore_disk()
    assert f.save("mine 2\n") == "saved"
    aside = f.save_aside("kept\n")
    assert aside.read_text() == "kept\n" and aside.parent == tmp_path / "backups" / "02-custom-autograd"


def test_code_suggestion() -> None:
    assert code_suggestion("use `ctx.save_for_backward(s)` here") == "ctx.save_for_backward(s)"
    assert code_suggestion("```python\nreturn s\n```") == "return s"
    assert code_suggestion("no code") is None
    # A fragment is not a line: an argument to add inside a call, or code that does not parse.
    assert code_suggestion("pass `dynamic=True` to torch.compile") is None
    assert code_suggestion("look at `x.view(-1` again") is None
    assert (
        code_suggestion("`model = torch.compile(model, dynamic=True)`") == "model = torch.compile(model, dynamic=True)"
    )
    assert code_suggestion("```python\na = 1\nb = 2\n```") is None  # ghost text is one line


async def test_editor_highlights_the_rows_in_view_after_scrolling_and_editing() -> None:
    from textual.app import App

    from tutor.ui.widgets.editor import CodeEditor

    text = "\n".join(f"def f{i}(x):\n    return x * {i}  # line {i}" for i in range(200))

    class Host(App[None]):
        def compose(self):
            editor = CodeEditor.code_editor(text, language="python")
            yield editor

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        editor = app.query_one(CodeEditor)
        if not editor._highlight_query:  # tree-sitter is not installed: nothing to window
            return
        await pilot.pause()
        assert editor._highlights[0]  # `def` on the first line
        assert not editor._highlights[390]  # far below the view: not queried
        editor.scroll_to(y=380, animate=False)
        await pilot.pause()
        assert editor._highlights[390] and editor._highlights[395]
        editor.move_cursor((391, 0))
        editor.insert("y = 1\n")
        await pilot.pause()
        assert editor._highlights[392]  # the shifted `def` line is still highlighted


def test_first_screen_cuts_at_a_blank_line_outside_code() -> None:
    from tutor.ui.widgets.guide import first_screen

    page = "\n".join(["# Title", "", "one", "two", "", "```python", "a = 1", "", "b = 2", "```", "", "after"])
    # Cut at the first blank line after 3 lines: the page keeps "one two" and stops.
    assert first_screen(page, 3) == "# Title\n\none\ntwo"
    # A blank line inside the fence is no place to cut: the fence closes first.
    assert first_screen(page, 7) == "\n".join(page.split("\n")[:10])
    assert first_screen(page, 50) == page  # shorter than the screen: all of it


def test_navigator_wraps_latin_titles_without_the_wide_regex() -> None:
    from tutor.ui.cjk import has_wide
    from tutor.ui.widgets.navigator import wrap_cells

    assert not has_wide("Sigmoid — with “quotes” → arrows")  # non-ASCII, still no wide character
    assert has_wide("复用输出") and has_wide("x ＝ 1")  # CJK and full-width forms
    assert wrap_cells("Write  a C++ extension", 9) == ["Write a", "C++", "extension"]


def test_render_cache_replays_a_page_exactly(tmp_path: Path) -> None:
    from rich.console import Console
    from rich.style import Style

    from tutor.ui import render_cache
    from tutor.ui.render_cache import RenderCache
    from tutor.ui.widgets.guide_markdown import guide_markdown

    page = "# Title\n\nSome *text* with `code`.\n\n```python\nx = torch.ones(3)  # a comment\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    console = Console(width=80, force_terminal=True, color_system="truecolor")
    lines = console.render_lines(guide_markdown(page, True), console.options.update(width=60))
    cache = RenderCache(tmp_path)
    cache.store(page, 60, "page", lines)

    def segments(rows: list) -> list:
        return [[(s.text, s.style or Style.null()) for s in row if not s.control and s.text] for row in rows]

    assert segments(cache.load(page, 60, "page")) == segments(lines)  # colours, bold, code background
    assert cache.load(page, 59, "page") is None  # another width draws afresh
    assert cache.load(page + "\nmore", 60, "page") is None  # an edited page too
    for f in tmp_path.glob("*.json"):
        f.write_text("[[", encoding="utf-8")  # a truncated file is a miss, not an error
    assert cache.load(page, 60, "page") is None
    old_max, render_cache.MAX_FILES = render_cache.MAX_FILES, 3
    try:
        for width in range(10, 16):
            cache.store(page, width, "page", lines)
        assert len(list(tmp_path.glob("*.json"))) == 3  # the oldest were removed
    finally:
        render_cache.MAX_FILES = old_max


def test_a_timing_with_named_sides_says_which_side_is_faster() -> None:
    timing = {"learner_s": 2.95e-3, "reference_s": 5.32e-3, "noisy": False, "sides": ["compiled", "eager"]}
    text = " ".join(plain(figures_view({"the norm: compiled vs eager": timing}), 100).split())
    assert "compiled 2.95 ms" in text and "eager 5.32 ms" in text
    assert "speedup 1.80× (eager ÷ compiled): compiled is faster" in text
    assert "yours" not in text and "ref" not in text.replace("reference", "")
