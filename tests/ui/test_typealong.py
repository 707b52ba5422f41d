"""TypeAlong driven by Pilot: colours, figures, persistence, scrolling, snapshots.

Keystroke times come from a fake clock moved on after each key, so every figure is exact.
The async tests run through the `pytest_pyfunc_call` hook of tests/ui/conftest.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Footer, Static

from tutor.progress import Progress, ProgressError, TypingRecord
from tutor.typing_engine import format_accuracy, normalize
from tutor.ui.widgets.typealong import TypeAlong, TypingArea
from support.fakes import FakeClock

KEY = "02-custom-autograd/first-function"
CODE = """\
import torch

def double(x):
    if x is None:
        return 0
    return x * 2
"""
# What the learner types: auto-indent and the blank line are filled in for them.
TYPED = "import torch\ndef double(x):\nif x is None:\nreturn 0\nreturn x * 2"
KEY_NAMES = {" ": "space", "\n": "enter", "\t": "tab"}


class Host(App[None]):
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, progress: Progress, target: str = CODE, clock: FakeClock | None = None) -> None:
        super().__init__()
        self.progress = progress
        self.target = target
        self.clock = clock or FakeClock()
        self.finished: list[TypeAlong.Finished] = []

    def compose(self) -> ComposeResult:
        yield TypeAlong(KEY, self.target, self.progress, clock=self.clock, id="typealong")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TypeAlong).focus()

    def on_type_along_finished(self, message: TypeAlong.Finished) -> None:
        self.finished.append(message)


async def type_keys(pilot: Pilot, clock: FakeClock, keys: list[str], step: float = 0.5) -> None:
    """Press keys one by one, the clock moving on `step` seconds after each."""
    for key in keys:
        await pilot.press(key)
        clock.now += step


def keys_for(text: str) -> list[str]:
    return [KEY_NAMES.get(ch, ch) for ch in text]


def code_cells(area: TypingArea, y: int) -> list[tuple[str, Style]]:
    """(character, style) of each code cell of screen row y, gutter skipped."""
    cells = [(ch, seg.style) for seg in area.render_line(y) for ch in seg.text]
    return cells[area._gutter :]


@pytest.fixture
def progress(tmp_path: Path) -> Progress:
    return Progress(tmp_path)


async def test_type_to_completion_with_mistakes(progress: Progress, tmp_path: Path) -> None:
    clock = FakeClock(100.0)
    app = Host(progress, clock=clock)
    async with app.run_test(size=(70, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        area = app.query_one(TypingArea)
        assert app.focused is ta

        # "im", a wrong "q" where "p" belongs: green, green, red (target char shown), caret.
        await type_keys(pilot, clock, keys_for("imq"))
        cells = code_cells(area, 0)
        assert "".join(ch for ch, _ in cells).startswith("import torch")
        (i, s_i), (_, s_m), (p, s_p), (o, s_o), (_, s_r) = cells[:5]
        assert (i, p, o) == ("i", "p", "o")
        assert s_i == s_m and not s_i.dim and s_i.color is not None
        assert s_p.bgcolor is not None and s_p.bold and s_p.underline  # red, and not colour alone
        assert s_p.color != s_i.color
        assert s_o.reverse  # the caret
        assert s_r.dim  # ghost text still to type
        assert ta.session.errors == 1

        await type_keys(pilot, clock, ["backspace"])
        assert code_cells(area, 0)[2][1].reverse  # caret back on "p"
        assert ta.session.errors == 1  # corrected, still counted

        # The rest, with one mistake left in: "iz" for "is".
        rest = TYPED[2:].replace("x is", "x iz")
        await type_keys(pilot, clock, keys_for(rest))
        await pilot.pause()
        assert ta.session.finished

        n_keys = len("imq") + 1 + len(rest)  # + backspace
        elapsed = 0.5 * (n_keys - 1)
        assert ta.session.started_at == 100.0 and ta.session.finished_at == 100.0 + elapsed
        keystrokes = len(TYPED) + 1
        assert ta.typed_text == normalize(CODE).replace("x is", "x iz") + "\n"

        assert len(app.finished) == 1
        rec = app.finished[0].record
        assert app.finished[0].passage_key == KEY
        assert rec.seconds == pytest.approx(elapsed)
        assert rec.errors == 2 and rec.hints == 0
        assert rec.accuracy == pytest.approx((keystrokes - 2) / keystrokes)
        assert rec.raw_wpm == pytest.approx(keystrokes / 5 / (elapsed / 60))
        assert rec.wpm == pytest.approx(((len(TYPED) - 1) / 5 - 1) / (elapsed / 60))

        # The stored record, readable by a fresh connection.
        again = Progress(tmp_path).typing_history(KEY)
        assert again == [rec]
        assert KEY in progress.passages_done()

        # Results view with the stats and, for a first attempt, its numbers (no chart).
        assert ta.has_class("-finished")
        summary = str(app.query_one("#typealong-summary").render())
        assert "1 mistake left" in summary and "errors 2 (1 uncorrected)" in summary
        history = str(app.query_one("#typealong-history").render())
        assert history == f"Attempt 1: {rec.wpm:.0f} WPM · accuracy {format_accuracy(rec.accuracy)}"

        # Once finished, the widget stops eating keys and the stats are frozen.
        clock.now += 60
        await pilot.press("a", "backspace")
        assert ta.typed_text == normalize(CODE).replace("x is", "x iz") + "\n"
        assert ta.session.stats().elapsed == pytest.approx(elapsed)


async def test_tab_hint_keeps_focus_and_counts(progress: Progress) -> None:
    app = Host(progress)
    async with app.run_test(size=(70, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        await pilot.press("tab", "tab")
        assert app.focused is ta
        assert ta.session.typed_text == "import torch"
        assert ta.session.hints == 2 and ta.session.keystrokes == 0
        hint = code_cells(app.query_one(TypingArea), 0)[0][1]
        assert hint.italic
        # Clicking the text gives the keyboard back to the widget.
        app.set_focus(None)
        await pilot.click(TypingArea)
        assert app.focused is ta


async def test_wrong_last_char_waits_then_enter_finishes(progress: Progress) -> None:
    app = Host(progress, target="ab\n  cd\n")
    async with app.run_test(size=(50, 10)) as pilot:
        ta = app.query_one(TypeAlong)
        await pilot.press("a", "b", "enter", "c", "x")
        assert ta.session.at_end and not app.finished
        assert "Enter finishes" in str(app.query_one("#typealong-stats").render())
        await pilot.press("enter")
        await pilot.pause()
        assert ta.session.finished and len(app.finished) == 1


async def test_restart_starts_over(progress: Progress) -> None:
    app = Host(progress)
    async with app.run_test(size=(70, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        await pilot.press(*keys_for("import"))
        await pilot.press("ctrl+t")
        assert ta.session.caret == 0 and not ta.session.started
        assert code_cells(app.query_one(TypingArea), 0)[0][1].reverse


async def test_progress_error_is_a_notification_not_a_crash(progress: Progress) -> None:
    def broken(rec: TypingRecord) -> None:
        raise ProgressError("cannot save progress: disk full")

    progress.record_typing = broken  # type: ignore[method-assign]
    app = Host(progress, target="ok")
    async with app.run_test(size=(50, 12)) as pilot:
        notes: list[str] = []
        ta = app.query_one(TypeAlong)
        ta.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        await pilot.press("o", "k")
        await pilot.pause()
        assert ta.session.finished and len(app.finished) == 1
        assert notes and "disk full" in notes[0]
        assert ta.has_class("-finished")


async def test_scrolls_to_keep_caret_visible(progress: Progress) -> None:
    target = "\n".join(f"v{i}" for i in range(16)) + "\nw = " + "a" * 100 + " b"
    app = Host(progress, target=target)
    async with app.run_test(size=(40, 12)) as pilot:
        area = app.query_one(TypingArea)
        ta = app.query_one(TypeAlong)
        await pilot.press(*["tab"] * 30)  # a hint per word, a hint per newline
        assert ta.session.caret_row == 15
        top = area.scroll_offset.y
        assert 0 < top <= 15 < top + area.scrollable_content_region.height
        assert any(style.reverse for _, style in code_cells(area, 15 - top))

        await pilot.press(*["tab"] * 2 + ["w", "space", "=", "space"] + ["tab"])
        assert (ta.session.caret_row, ta.session.caret_col) == (16, 105)
        assert area.scroll_offset.x == 0  # never sideways: the long line wraps instead
        rows = [code_cells(area, y) for y in range(area.scrollable_content_region.height)]
        caret = [ch for cells in rows for ch, style in cells if style.reverse]
        assert caret == ["b"]  # the caret is in view


def screen_text(area: TypingArea) -> list[str]:
    return ["".join(seg.text for seg in area.render_line(y)) for y in range(area.scrollable_content_region.height)]


@pytest.mark.parametrize("width", [52, 34])
async def test_long_lines_wrap_so_the_text_to_type_is_in_sight(progress: Progress, width: int) -> None:
    line = '    print("first derivatives ok:", gradcheck(Cube.apply, (x,), eps=1e-6, atol=1e-4))'
    target = f"import torch\n{line}\nx = 1"
    app = Host(progress, target=target)
    async with app.run_test(size=(width, 16)) as pilot:
        area = app.query_one(TypingArea)
        shown = screen_text(area)
        # Every character of the long line is on screen, over several rows, none cut.
        numbered = [r for r in shown if r.strip()[:1].isdigit()]
        assert [r.split()[0] for r in numbered] == ["1", "2", "3"]
        cont = [r for r in shown if r.lstrip().startswith("↪")]
        assert len(cont) >= 1
        joined = "".join(r[area._gutter :].strip() for r in shown[1 : 2 + len(cont)])
        assert joined.replace(" ", "") == line.replace(" ", "")
        for r in shown:  # broken after a space: no row ends inside a word followed by more of it
            assert len(r.rstrip()) <= width
        # No name is cut: each one stands whole on one row (breaks fall between tokens).
        rows_code = [r[area._gutter :] for r in shown[1 : 2 + len(cont)]]
        for name in re.findall(r"[A-Za-z_]\w*", line):
            assert any(name in code for code in rows_code), (name, rows_code)
        # Typing the first line moves the caret onto the long line; then Tab through it:
        # the caret stays on screen and the line-3 row follows the wrapped rows.
        await pilot.press(*keys_for("import torch\n"))
        await pilot.press(*["tab"] * 8)
        rows = [code_cells(area, y) for y in range(area.scrollable_content_region.height)]
        assert [ch for cells in rows for ch, style in cells if style.reverse]
        assert area.scroll_offset.x == 0


async def test_paste_is_refused(progress: Progress) -> None:
    app = Host(progress)
    async with app.run_test(size=(70, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        notes: list[str] = []
        ta.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        from textual import events

        ta.post_message(events.Paste("import torch"))
        await pilot.pause()
        assert ta.session.caret == 0 and notes


async def test_natural_typing_enter_on_blank_lines_and_typed_indent_is_perfect(progress: Progress) -> None:
    clock = FakeClock(100.0)
    app = Host(progress, clock=clock)
    async with app.run_test(size=(100, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        # Exactly as the code reads: two Enters after the import, four spaces typed by hand.
        await type_keys(pilot, clock, keys_for(normalize(CODE) + "\n"), step=0.25)
        await pilot.pause()
        assert ta.session.finished and ta.typed_text == normalize(CODE) + "\n"
        shown = str(app.query_one("#typealong-stats").render())
        assert "accuracy 100%" in shown and "errors 0 (0 uncorrected)" in shown
        wpm = app.finished[0].record.wpm
        assert wpm > 30  # 0.25 s a key is 48 WPM of typing; absorbed keys take some of it


async def test_one_slip_then_enter_stays_on_its_line(progress: Progress) -> None:
    app = Host(progress)
    async with app.run_test(size=(100, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        area = app.query_one(TypingArea)
        # The missed "h" of the issue: "import torc" and Enter, then the next line as usual.
        await pilot.press(*keys_for("import torc\n\ndef doubke(x):\n"))
        s = ta.session
        assert s.errors == 2 and s.uncorrected_errors == 2 and s.stats().missed == 1
        row0 = code_cells(area, 0)
        assert [c for c, style in row0 if style.strike] == ["h"]  # missed: struck through
        row2 = code_cells(area, 2)[: len("def double(x):")]
        red = [c for c, style in row2 if style.bgcolor is not None and style.bold]
        assert red == ["l"]  # only the slip, not the rest of the line
        assert (s.caret_row, s.caret_col) == (3, 4)
        shown = str(app.query_one("#typealong-stats").render())
        assert "errors 2 (2 uncorrected)" in shown and "100%" not in shown


async def test_extra_character_is_shown_and_the_caret_follows(progress: Progress) -> None:
    app = Host(progress)
    async with app.run_test(size=(100, 20)) as pilot:
        ta = app.query_one(TypeAlong)
        area = app.query_one(TypingArea)
        await pilot.press(*keys_for("import torchh"))
        row = code_cells(area, 0)
        assert "".join(c for c, _ in row).startswith("import torchh ")
        assert row[12][1].italic and row[12][1].bgcolor is not None  # the extra "h"
        assert row[13][1].reverse  # the caret after it
        await pilot.press("backspace", "enter")
        assert ta.session.caret_row == 2 and ta.session.errors == 1


@pytest.mark.parametrize("width", [120, 80, 50])
async def test_note_and_figures_fit_the_pane(progress: Progress, width: int) -> None:
    app = Host(progress)
    async with app.run_test(size=(width, 16)) as pilot:
        note = str(app.query_one("#typealong-note").render())
        assert "Tab" in note and len(note) <= width - 2
        if width >= 80:
            assert "filled in for you" in note
        await pilot.press(*keys_for("imx"))
        stats = app.query_one("#typealong-stats")
        shown = str(stats.render())
        assert len(shown) <= stats.content_region.width
        assert "WPM" in shown and ("errors 1" in shown or "1 err" in shown)


async def test_history_is_numbers_then_a_sparkline(progress: Progress) -> None:
    clock = FakeClock()
    app = Host(progress, target="ok", clock=clock)
    async with app.run_test(size=(70, 16)) as pilot:
        ta = app.query_one(TypeAlong)
        texts = []
        for attempt in range(4):
            await type_keys(pilot, clock, ["o", "k"], step=0.5 + attempt)
            await pilot.pause()
            texts.append(str(app.query_one("#typealong-history").render()))
            await pilot.press("ctrl+t")
        assert texts[0].startswith("Attempt 1: ") and texts[0].count("\n") == 0
        assert texts[1].splitlines()[1].startswith("Attempt 2: ")
        assert not any(ch in "".join(texts[:2]) for ch in "▁▂▃▄▅▆▇█")
        wpm_line, acc_line = texts[3].splitlines()
        assert wpm_line.startswith("WPM") and "4 attempts" in str(app.query_one("#typealong-summary").render())
        bars = wpm_line.split()[1]
        assert len(bars) == 4 and bars[0] == "█"  # slower each time: from the top down
        assert list(bars) == sorted(bars, reverse=True) and bars[3] != "█"
        assert acc_line.startswith("accuracy") and "100% → 100%" in acc_line
        assert ta.session.started is False


async def test_f1_help_explains_the_type_along_and_its_figures(progress: Progress) -> None:
    from tutor.ui.screens.help import HelpScreen

    app = Host(progress)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.push_screen(HelpScreen([]))
        await pilot.pause()
        body = app.screen.query_one("#help-body", Static).content
        from rich.console import Console

        console = Console(width=90, record=True, color_system=None)
        console.print(body)
        text = " ".join(console.export_text().split())
        assert "Type-along" in text
        assert "Indentation and blank lines are filled in for you" in text
        assert "Accuracy = (keystrokes − errors) ÷ keystrokes" in text
        assert "uncorrected" in text and "Raw WPM" in text


# -- snapshots -----------------------------------------------------------------------------


def test_snapshot_half_typed_with_one_error(snap_compare, tmp_path: Path) -> None:
    clock = FakeClock(100.0)
    app = Host(Progress(tmp_path), clock=clock)

    async def run_before(pilot: Pilot) -> None:
        await type_keys(pilot, clock, keys_for("import torch\ndef doible(x):\nif x "), step=0.4)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(70, 18), run_before=run_before)


def test_snapshot_results(snap_compare, tmp_path: Path) -> None:
    progress = Progress(tmp_path)
    for at, wpm in [(1.0, 21.0), (2.0, 34.0), (3.0, 28.0)]:
        progress.record_typing(TypingRecord(KEY, at, wpm, wpm + 4, 0.95, 2, 0, 60.0))
    clock = FakeClock(100.0)
    app = Host(progress, clock=clock)

    async def run_before(pilot: Pilot) -> None:
        await type_keys(pilot, clock, keys_for(TYPED), step=0.3)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(70, 22), run_before=run_before)
