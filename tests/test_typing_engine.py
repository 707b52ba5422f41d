"""The type-along engine and the typing statistics summary, with a scripted clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.typing_engine import (
    AUTO,
    CARET,
    CORRECT,
    EXTRA,
    HINT,
    INCORRECT,
    MISSED,
    PENDING,
    TypingSession,
    format_accuracy,
    normalize,
)
from support.fakes import FakeClock


def type_text(s: TypingSession, text: str, clock: FakeClock | None = None, step: float = 0.0) -> None:
    for ch in text:
        if clock is not None:
            clock.now += step
        s.type_char(ch)


CODE = "def f(x):\n    if x:\n\n        return 1\n    return 2\n"


# -- normalising ---------------------------------------------------------------------------


def test_normalize_strips_trailing_space_and_outer_blank_lines() -> None:
    assert normalize("\n\n  a = 1   \n\n  b = 2\t\n\n\n") == "a = 1\n\nb = 2"
    assert normalize("x\r\n\tif y:\r\n") == "x\n    if y:"


def test_trailing_spaces_in_target_are_not_required() -> None:
    s = TypingSession("a = 1   \n\n\nb = 2  \n\n")
    type_text(s, "a = 1\nb = 2")
    assert s.finished
    assert s.typed_text == "a = 1\n\n\nb = 2"
    assert s.errors == 0


# -- typing --------------------------------------------------------------------------------


def test_correct_and_incorrect_chars() -> None:
    s = TypingSession("abc")
    s.type_char("a")
    s.type_char("x")
    assert [s.status_at(i) for i in range(3)] == [CORRECT, INCORRECT, CARET]
    assert s.caret == 2 and s.errors == 1 and s.keystrokes == 2
    assert s.typed_text == "ax"
    assert not s.finished


def test_backspace_corrects_but_mistake_still_counts() -> None:
    s = TypingSession("abc")
    type_text(s, "ax")
    s.backspace()
    assert s.caret == 1 and s.status_at(1) == CARET
    type_text(s, "bc")
    assert s.finished
    st = s.stats()
    assert st.errors == 1 and st.keystrokes == 4 and st.uncorrected_errors == 0
    assert st.accuracy == pytest.approx(3 / 4)


def test_backspace_at_start_is_a_no_op() -> None:
    s = TypingSession("ab")
    s.backspace()
    assert s.caret == 0 and not s.started


def test_auto_indent_after_enter_and_blank_lines_skipped() -> None:
    s = TypingSession(CODE)
    type_text(s, "def f(x):")
    s.enter()
    assert (s.caret_row, s.caret_col) == (1, 4)
    assert s.typed_text == "def f(x):\n    "
    assert [s.status_at(i) for i in range(9, 14)] == [CORRECT] + [AUTO] * 4
    type_text(s, "if x:\n")
    # The blank line and the 8-space indent are filled in.
    assert (s.caret_row, s.caret_col) == (3, 8)
    assert s.typed_text.endswith("if x:\n\n        ")
    type_text(s, "return 1\nreturn 2")
    assert s.finished
    assert s.typed_text == normalize(CODE)
    assert s.errors == 0
    assert s.keystrokes == len("def f(x):\nif x:\nreturn 1\nreturn 2")


def test_backspace_across_auto_indent_goes_to_previous_line_end() -> None:
    s = TypingSession(CODE)
    type_text(s, "def f(x):\nif x:\n")
    assert (s.caret_row, s.caret_col) == (3, 8)
    s.backspace()  # removes the indent, the blank line and the Enter
    assert (s.caret_row, s.caret_col) == (1, 9)
    assert s.typed_text == "def f(x):\n    if x:"
    s.backspace()
    assert s.typed_text == "def f(x):\n    if x"
    for _ in range(4):
        s.backspace()
    assert s.typed_text == "def f(x):\n    "
    s.backspace()  # the indent goes with the Enter
    assert s.typed_text == "def f(x):"


def test_indented_first_line_is_prefilled_and_kept() -> None:
    s = TypingSession("    x = 1\ny")
    assert s.caret == 4 and s.status_at(0) == AUTO
    s.backspace()
    assert s.caret == 4


def test_enter_in_mid_line_skips_the_rest_as_missed_without_shifting() -> None:
    s = TypingSession("import torch\nx = 1")
    type_text(s, "import torc\n")  # one missed "h", then Enter
    assert s.status_at(11) == MISSED and s.caret_row == 1 and s.caret_col == 0
    assert s.errors == 1 and s.stats().missed == 1 and s.stats().uncorrected_errors == 1
    type_text(s, "x = 1")  # the next line is not painted red
    assert s.finished
    assert [s.status_at(p) for p in range(13, 18)] == [CORRECT] * 5
    assert s.typed_text == "import torc\nx = 1"
    assert s.line_segments(0) == [("import torc", CORRECT), ("h", MISSED)]


def test_backspace_undoes_an_enter_skip_at_once() -> None:
    s = TypingSession("ab cd\n    e")
    type_text(s, "a\n")
    assert (s.caret_row, s.caret_col) == (1, 4)
    s.backspace()  # the Enter, the skipped "b cd" and the indent go together
    assert s.caret == 1 and s.uncorrected_errors == 0 and s.stats().missed == 0
    type_text(s, "b cd\ne")
    assert s.finished and s.errors == 1 and s.uncorrected_errors == 0


def test_space_inside_a_word_skips_to_the_next_word() -> None:
    s = TypingSession("x = torch.zeros(3) + y")
    type_text(s, "x = torch.ze + y")
    assert s.finished and s.errors == 1 and s.stats().missed == len("ros(3)")
    assert s.typed_text == "x = torch.ze + y"
    # The last word of a line: the space skips to the line end, Enter still moves on.
    s = TypingSession("a bcd\ne")
    type_text(s, "a b ")
    assert (s.caret_row, s.caret_col) == (0, 5) and s.status_at(5) == CARET
    type_text(s, "\ne")
    assert s.finished and s.errors == 1


def test_blank_line_enters_and_typed_indentation_are_absorbed() -> None:
    s = TypingSession(CODE)
    type_text(s, normalize(CODE) + "\n")  # exactly as the code reads
    assert s.finished and s.errors == 0 and s.stats().accuracy == 1.0
    assert s.keystrokes == len("def f(x):\nif x:\nreturn 1\nreturn 2")
    assert s.typed_text == normalize(CODE)
    # Extra Enters and over-indentation are no mistakes either.
    s = TypingSession("a\n  b")
    type_text(s, "\na\n\n\n      b")
    assert s.finished and s.errors == 0


def test_alignment_spaces_typed_as_one() -> None:
    target = "x = 1      # one\nlong = 2   # two"
    for typed in ("x = 1 # one\nlong = 2 # two", target, "x = 1   # one\nlong = 2     # two"):
        s = TypingSession(target)
        type_text(s, typed)
        assert s.finished and s.errors == 0, typed
        assert s.typed_text == target
    s = TypingSession(target)
    type_text(s, "x = 1 ")
    assert s.caret_col == len("x = 1      ")  # the run is filled in, the caret waits at "#"
    s.backspace()
    assert s.caret_col == len("x = 1")


def test_extra_character_stays_in_its_word() -> None:
    s = TypingSession("for i in x:\n    pass")
    type_text(s, "forr i in x:;\npass")
    assert s.finished and s.errors == 2 and s.uncorrected_errors == 2
    assert s.typed_text == "forr i in x:;\n    pass"
    assert s.line_segments(0) == [("for", CORRECT), ("r", EXTRA), (" i in x:", CORRECT), (";", EXTRA)]
    assert [s.status_at(p) for p in range(4, 11)] == [CORRECT] * 7  # nothing shifted


def test_backspace_removes_an_extra_character() -> None:
    s = TypingSession("ab\nc")
    type_text(s, "abx")
    assert s.caret == 2 and s.extra_at(2) == "x" and s.caret_screen_col == 3
    s.backspace()
    assert s.extra_at(2) == "" and s.uncorrected_errors == 0 and s.errors == 1
    type_text(s, "\nc")
    assert s.finished and s.typed_text == "ab\nc"


def test_left_out_letter_costs_one_error_not_the_word() -> None:
    s = TypingSession("def forward(ctx, x):")
    type_text(s, "def forwr")
    assert s.status_at(8) == INCORRECT  # "r" where "a" belongs: a slip, for now
    type_text(s, "d")  # "rd" is what follows the "a": it was left out
    assert [s.status_at(p) for p in range(7, 11)] == [CORRECT, MISSED, CORRECT, CORRECT]
    assert s.errors == 1 and s.uncorrected_errors == 1 and s.stats().missed == 1
    s.backspace()  # undoes the "d" and the re-reading
    assert s.caret == 9 and s.status_at(8) == INCORRECT and s.stats().missed == 0
    s.backspace()
    assert s.caret == 8 and s.uncorrected_errors == 0
    type_text(s, "rd(ctx, x):")  # the same slip again, typed through to the end
    assert s.finished and s.typed_text == "def forwrd(ctx, x):"
    assert s.errors == 2 and s.uncorrected_errors == 1


def test_transposed_letters_stay_two_substitutions() -> None:
    s = TypingSession("return x")
    type_text(s, "retrun x")
    assert s.finished and s.errors == 2 and s.stats().missed == 0
    assert [s.status_at(p) for p in (3, 4)] == [INCORRECT, INCORRECT]


def test_tab_hint_inserts_next_word_and_counts() -> None:
    s = TypingSession("x = torch.zeros(3)\nif x:\n    y")
    s.hint()
    assert s.typed_text == "x " and s.hints == 1 and s.keystrokes == 0
    assert s.status_at(0) == HINT and s.status_at(1) == HINT
    type_text(s, "= ")
    s.type_char("\t")  # Tab through type_char is a hint too
    assert s.typed_text == "x = torch.zeros(3)" and s.hints == 2
    s.hint()  # at a line end: the newline (and nothing to indent)
    assert s.caret_row == 1 and s.hints == 3
    type_text(s, "if")
    s.hint()  # rest of the current word
    assert s.typed_text.endswith("if x:")
    s.hint()  # newline plus the auto indent
    assert (s.caret_row, s.caret_col) == (2, 4)
    s.hint()
    assert s.finished and s.hints == 6 and s.errors == 0
    assert s.stats().correct_chars == 4  # "= " and "if"


# -- figures -------------------------------------------------------------------------------


def test_wpm_all_correct_exact() -> None:
    clock = FakeClock(10.0)
    s = TypingSession("hello world", clock=clock)
    s.type_char("h")  # t = 10: the clock starts at the first keystroke
    type_text(s, "ello world", clock, step=1.0)  # 10 more, one a second: t = 20
    assert s.finished
    st = s.stats()
    assert st.elapsed == 10.0
    assert st.raw_wpm == pytest.approx(11 / 5 / (10 / 60))  # 13.2
    assert st.wpm == pytest.approx(13.2)
    assert st.accuracy == 1.0 and st.errors == 0


def test_wpm_with_corrected_mistake_exact() -> None:
    clock = FakeClock(0.0)
    s = TypingSession("abcde", clock=clock)
    s.type_char("a")
    clock.now = 2.0
    s.type_char("x")
    clock.now = 3.0
    s.backspace()
    for i, ch in enumerate("bcde"):
        clock.now = 6.0 + 2 * i  # last key at t = 12
        s.type_char(ch)
    st = s.stats()
    assert st.elapsed == 12.0
    assert st.keystrokes == 6 and st.errors == 1
    assert st.accuracy == pytest.approx(5 / 6)
    assert st.raw_wpm == pytest.approx(6.0)  # 6 chars / 5 / 0.2 min
    assert st.wpm == pytest.approx(5.0)  # 5 correct / 5 / 0.2 min


def test_wpm_with_uncorrected_mistake_exact() -> None:
    clock = FakeClock(0.0)
    s = TypingSession("abcdefghij", clock=clock)
    for t, ch in zip([0, 1, 2, 2.5, 3, 4, 4.5, 5, 5.5, 6], "abcxefghij"):
        clock.now = t
        s.type_char(ch)
    assert s.finished and s.finished_at == 6
    st = s.stats()
    assert st.uncorrected_errors == 1 and st.correct_chars == 9
    assert st.raw_wpm == pytest.approx(20.0)  # 10 / 5 / 0.1 min
    assert st.wpm == pytest.approx(8.0)  # (9 / 5 - 1) / 0.1 min
    assert st.accuracy == pytest.approx(0.9)


def test_net_wpm_never_negative_and_zero_before_start() -> None:
    clock = FakeClock(0.0)
    s = TypingSession("abcde", clock=clock)
    st = s.stats()
    assert (st.wpm, st.raw_wpm, st.elapsed, st.accuracy) == (0.0, 0.0, 0.0, 1.0)
    type_text(s, "xxxx", clock, step=1.0)
    assert s.stats().wpm == 0.0
    assert s.stats().elapsed == 3.0  # live: the clock runs while typing


def test_finishing_freezes_input_and_time() -> None:
    clock = FakeClock(0.0)
    s = TypingSession("ab", clock=clock)
    type_text(s, "ab", clock, step=1.0)
    assert s.finished and s.finished_at == 2.0
    clock.now = 50.0
    s.type_char("c")
    s.backspace()
    s.enter()
    s.hint()
    assert s.typed_text == "ab" and s.stats().elapsed == 1.0


def test_finishing_with_uncorrected_mistake_inside() -> None:
    s = TypingSession("abc")
    type_text(s, "axc")
    assert s.finished and s.typed_text == "axc" and s.stats().uncorrected_errors == 1


def test_wrong_last_char_waits_for_backspace_or_enter() -> None:
    clock = FakeClock(0.0)
    s = TypingSession("ab\ncd", clock=clock)
    type_text(s, "ab\ncx", clock, step=1.0)
    assert not s.finished and s.at_end
    assert s.line_segments(1) == [("c", CORRECT), ("d", INCORRECT), (" ", CARET)]
    type_text(s, "y")  # nowhere to go: ignored
    s.hint()
    assert s.typed_text == "ab\ncx" and s.keystrokes == 5
    s.backspace()
    s.type_char("d")
    assert s.finished and s.errors == 1 and s.stats().uncorrected_errors == 0
    s2 = TypingSession("ab", clock=clock)
    type_text(s2, "ax")
    clock.now += 3
    s2.enter()  # accept the mistake
    assert s2.finished and s2.finished_at == clock.now and s2.keystrokes == 2


def test_reset_starts_over() -> None:
    s = TypingSession("    ab\nc")
    type_text(s, "ax")
    s.reset()
    assert s.caret == 4 and s.keystrokes == 0 and s.errors == 0 and not s.started


def test_empty_target_is_finished() -> None:
    s = TypingSession("  \n\n")
    assert s.finished and s.stats().wpm == 0.0


# -- render segments -----------------------------------------------------------------------


def test_segments_runs_and_caret() -> None:
    s = TypingSession("ab\ncd\n\n  ef")
    type_text(s, "ax")
    assert s.line_segments(0) == [("a", CORRECT), ("b", INCORRECT), (" ", CARET)]
    assert s.line_segments(1) == [("cd", PENDING)]
    s.enter()
    type_text(s, "c")
    assert s.segments(0, 10) == [
        [("a", CORRECT), ("b", INCORRECT)],
        [("c", CORRECT), ("d", CARET)],
        [],
        [("  ef", PENDING)],
    ]
    type_text(s, "d\n")
    assert s.line_segments(3) == [("  ", AUTO), ("e", CARET), ("f", PENDING)]
    assert s.line_segments(2) == []


def test_row_of_positions() -> None:
    s = TypingSession("ab\ncd")
    assert [s.row_of(i) for i in range(6)] == [0, 0, 0, 1, 1, 1]


# -- tutor.stats ---------------------------------------------------------------------------


def _course():
    from tutor.course import Chapter, Course, Exercise, Passage

    def chapter(number: int, slug: str, passage_ids: list[str]) -> Chapter:
        steps = tuple(
            Passage(chapter_slug=slug, index=i, kind="passage", id=pid, title=pid, texts={})
            for i, pid in enumerate(passage_ids)
        )
        steps += (
            Exercise(chapter_slug=slug, index=len(steps), kind="exercise", id=f"ex{number}", title="ex", texts={}),
        )
        return Chapter(
            number=number,
            slug=slug,
            title=f"Chapter {number}",
            summary="",
            directory=Path("."),
            languages=("en",),
            steps=steps,
        )

    return Course(
        chapters=(
            chapter(1, "01-basics", ["p1", "p2"]),
            chapter(2, "02-autograd", ["q1"]),
            chapter(3, "03-reading", []),
        )
    )


def test_summarize_per_chapter(tmp_path: Path) -> None:
    from tutor.progress import Progress, TypingRecord
    from tutor.stats import summarize

    progress = Progress(tmp_path)
    for at, passage, wpm, acc in [
        (1, "01-basics/p1", 30.0, 0.90),
        (2, "01-basics/p1", 50.0, 0.95),
        (3, "01-basics/p2", 40.0, 0.99),
        (4, "99-gone/x", 99.0, 1.0),
    ]:
        progress.record_typing(TypingRecord(passage, at, wpm, wpm + 5, acc, 1, 0, 60.0))
    rows = summarize(progress, _course())
    assert [(r.number, r.done, r.total) for r in rows] == [(1, 2, 2), (2, 0, 1), (3, 0, 0)]
    first = rows[0]
    assert first.best_wpm == 50.0 and first.best_accuracy == 0.99
    assert first.recent_wpm == pytest.approx(40.0) and first.recent_accuracy == pytest.approx((0.90 + 0.95 + 0.99) / 3)
    assert first.attempts == 3
    assert rows[1].best_wpm is None and rows[1].recent_wpm is None


def test_render_stats_table() -> None:
    from rich.console import Console

    from tutor.stats import ChapterStats, render_stats

    rows = [
        ChapterStats(1, "01-basics", "Basics", 1, 2, 3, 50.0, 0.99, 40.0, 0.95),
        ChapterStats(2, "02-x", "Other", 0, 1, 0, None, None, None, None),
    ]
    console = Console(width=100, record=True, color_system=None)
    console.print(render_stats(rows))
    out = console.export_text()
    assert "Basics" in out and "1/2" in out and "50" in out and "99.0%" in out and "—" in out


def test_accuracy_is_shown_rounded_down_so_one_error_never_reads_100() -> None:
    assert format_accuracy(1.0) == "100%"
    assert format_accuracy(999 / 1000) == "99.9%"
    assert format_accuracy(2999 / 3000) == "99.9%"  # 99.97%: rounding would say 100%
    assert format_accuracy(0.5) == "50.0%" and format_accuracy(0.0) == "0.0%"
    s = TypingSession("x = 1\n" * 300)
    type_text(s, "y" + ("x = 1\n" * 300)[1:])
    assert s.finished and s.errors == 1 and s.keystrokes == 1799  # the last Enter: done
    assert format_accuracy(s.stats().accuracy) == "99.9%"


# -- history: numbers, then a sparkline ----------------------------------------------------


def test_sparkline_scales_and_never_draws_a_flat_series_as_full_blocks() -> None:
    from tutor.stats import sparkline

    assert sparkline([]) == ""
    assert sparkline([10, 20, 30]) == "▁▅█"
    assert sparkline([30, 30, 30]) == "▄▄▄"
    assert sparkline([0.98, 1.0], low=0.8, high=1.0) == "▇█"  # 98% is no cliff below 100%
    assert sparkline([40, 20], low=0) == "█▅"


def test_history_lines_numbers_below_three_attempts_then_charts() -> None:
    from tutor.progress import TypingRecord
    from tutor.stats import CHART_WIDTH, history_lines

    def rec(i: int, wpm: float, acc: float) -> TypingRecord:
        return TypingRecord("p", float(i), wpm, wpm + 5, acc, 1, 0, 60.0)

    assert history_lines([]) == []
    assert history_lines([rec(1, 41.6, 0.9996)]) == ["Attempt 1: 42 WPM · accuracy 99.9%"]
    two = history_lines([rec(1, 30, 0.95), rec(2, 35, 1.0)])
    assert two == ["Attempt 1: 30 WPM · accuracy 95.0%", "Attempt 2: 35 WPM · accuracy 100%"]
    three = history_lines([rec(1, 20, 0.85), rec(2, 30, 0.95), rec(3, 40, 1.0)])
    assert three == ["WPM       ▅▆█  20 → 40", "accuracy  ▃▆█  85.0% → 100%"]
    many = history_lines([rec(i, 10 + i, 0.9) for i in range(CHART_WIDTH + 6)])
    assert len(many[0].split()[1]) == CHART_WIDTH
    assert f"(last {CHART_WIDTH} of {CHART_WIDTH + 6})" in many[0]
