"""The type-along engine against how people really type code.

Every course passage is replayed the way a person types it in an editor: Enter on blank lines,
the indentation typed by hand, alignment spaces typed or not. Then with one slip per line, and
finally with random keystroke streams (hypothesis) to show the figures cannot contradict.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor.course import Passage, load_course
from tutor.typing_engine import AUTO, CARET, CORRECT, EXTRA, MISSED, TypingSession, format_accuracy, normalize
from support.fakes import FakeClock

PASSAGES: list[Passage] = [s for s in load_course().steps() if isinstance(s, Passage)]
BACKSPACE = "\b"


def replay(session: TypingSession, keys: str, clock: FakeClock | None = None, step: float = 0.25) -> None:
    for key in keys:
        if clock is not None:
            clock.now += step
        if key == BACKSPACE:
            session.backspace()
        else:
            session.type_char(key)


def statuses(s: TypingSession) -> list[str]:
    return [s.status_at(p) for p in range(len(s.target))]


def test_the_course_has_passages() -> None:
    assert len(PASSAGES) >= 12  # at least one per chapter: the replays below are not vacuous


@pytest.mark.parametrize("passage", PASSAGES, ids=lambda p: p.key)
def test_natural_typing_of_every_passage_is_perfect(passage: Passage) -> None:
    code = normalize(passage.code())
    collapsed = re.sub(r"(?<=\S)  +(?=\S)", " ", code)  # alignment runs typed as one space
    bare = "\n".join(line.strip() for line in code.split("\n") if line.strip())  # tutor style
    assert "\n\n" in code or "    " in code  # the passage exercises blank lines or indentation
    for typed in (code + "\n", collapsed + "\n", bare):
        s = TypingSession(passage.code())
        replay(s, typed)
        st_ = s.stats()
        assert s.finished, passage.key
        assert (st_.errors, st_.uncorrected_errors, st_.missed) == (0, 0, 0), passage.key
        assert st_.accuracy == 1.0 and format_accuracy(st_.accuracy) == "100%"
        assert s.typed_text == code
        assert set(statuses(s)) <= {CORRECT, AUTO}


def _slip_positions(code: str) -> list[int]:
    """The middle non-blank character of every non-blank line."""
    positions, start = [], 0
    for line in code.split("\n"):
        chars = [start + i for i, ch in enumerate(line) if not ch.isspace()]
        if chars:
            positions.append(chars[len(chars) // 2])
        start += len(line) + 1
    return positions


@pytest.mark.parametrize("passage", PASSAGES, ids=lambda p: p.key)
def test_one_slip_per_line_counts_only_that_position(passage: Passage) -> None:
    code = normalize(passage.code())
    perfect = TypingSession(code)
    replay(perfect, code + "\n")
    slips = _slip_positions(code)
    typed = list(code)
    for p in slips:
        typed[p] = "Q" if code[p] != "Q" else "Z"
    clock = FakeClock(0.0)
    s = TypingSession(code, clock=clock)
    replay(s, "".join(typed) + "\n", clock, step=0.25)  # 0.25 s a key: 48 WPM
    st_ = s.stats()
    assert s.finished
    assert [p for p, status in enumerate(statuses(s)) if status != CORRECT and status != AUTO] == slips
    assert st_.errors == st_.uncorrected_errors == len(slips) and st_.missed == 0
    assert st_.keystrokes == perfect.keystrokes
    assert st_.accuracy == pytest.approx((st_.keystrokes - len(slips)) / st_.keystrokes)
    assert format_accuracy(st_.accuracy) != "100%"
    # A normal pace with a few slips is a normal net WPM, not 0.
    assert 0.6 * st_.raw_wpm < st_.wpm < st_.raw_wpm


@pytest.mark.parametrize("passage", PASSAGES, ids=lambda p: p.key)
def test_a_dropped_character_costs_at_most_its_word(passage: Passage) -> None:
    code = normalize(passage.code())
    words = [m for m in re.finditer(r"\S+", code)]
    by_line: dict[int, re.Match[str]] = {}
    for m in words:  # the longest word of each line
        row = code.count("\n", 0, m.start())
        if len(m.group()) >= 2 and (row not in by_line or len(m.group()) > len(by_line[row].group())):
            by_line[row] = m
    drops = {m.start() + len(m.group()) // 2: m for m in by_line.values()}
    typed = "".join(ch for p, ch in enumerate(code) if p not in drops)
    s = TypingSession(code)
    replay(s, typed + "\n")
    assert s.finished
    wrong = [p for p, status in enumerate(statuses(s)) if status not in (CORRECT, AUTO)]
    assert wrong  # every dropped character shows
    spans = [(m.start(), m.end()) for m in drops.values()]
    for p in wrong:  # ... and only inside the word it was dropped from
        assert any(a <= p < b for a, b in spans), (passage.key, p, code[p])
    starts = [m.start() for m in re.finditer(r"^ *\S", code, re.MULTILINE)]
    for start in starts:  # nothing shifts into the next lines: each starts correct...
        first = start + len(code[start:]) - len(code[start:].lstrip(" "))
        if not any(a == first for a, _ in spans):  # ...unless its first word lost a character
            assert s.status_at(first) == CORRECT, (passage.key, first)
    assert s.errors <= len(typed)


@pytest.mark.parametrize("passage", PASSAGES, ids=lambda p: p.key)
def test_a_left_out_letter_is_one_error_and_one_missed_character(passage: Passage) -> None:
    code = normalize(passage.code())
    drops = []
    for line in re.finditer(r"[^\n]+", code):  # per line, the first word it is unambiguous in
        for m in re.finditer(r"\S{4,}", line.group()):
            w = m.group()
            if w[1] != w[2] and w[2] != w[3]:
                drops.append(line.start() + m.start() + 1)
                break
    assert drops
    s = TypingSession(code)
    replay(s, "".join(ch for p, ch in enumerate(code) if p not in drops) + "\n")
    assert s.finished
    assert [p for p, status in enumerate(statuses(s)) if status != CORRECT and status != AUTO] == drops
    assert {s.status_at(p) for p in drops} == {MISSED}
    assert s.errors == s.uncorrected_errors == s.stats().missed == len(drops)


# -- figures that cannot contradict ---------------------------------------------------------

TARGETS = st.lists(
    st.sampled_from(["ab", "c", "(x)", "abcd", "  ", "    ", "d  e", "x = (a)  # b", ""]), min_size=1, max_size=8
).map("\n".join)
KEYS = st.lists(st.sampled_from(list("abcde()x :\n\t") + [BACKSPACE] * 3), max_size=120)


@st.composite
def noisy_typing(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A target and a person typing it with slips: most characters typed, some left out,
    replaced, doubled, or fixed with Backspace; stray spaces and Enters."""
    target = normalize(draw(TARGETS))
    keys: list[str] = []
    for ch in target:
        action = draw(st.sampled_from(["type"] * 6 + ["drop", "wrong", "extra", "fix", "stray"]))
        if action == "type":
            keys.append(ch)
        elif action == "wrong":
            keys.append(draw(st.sampled_from("abx(")))
        elif action == "extra":
            keys += [ch, draw(st.sampled_from("abx)"))]
        elif action == "fix":
            keys += [draw(st.sampled_from("abx")), BACKSPACE, ch]
        elif action == "stray":
            keys += [draw(st.sampled_from([" ", "\n", "\t"])), ch]
    return target, keys + ["\n"]


def check_invariants(s: TypingSession) -> None:
    st_ = s.stats()
    assert 0 <= st_.uncorrected_errors <= st_.errors <= st_.keystrokes
    expected = (st_.keystrokes - st_.errors) / st_.keystrokes if st_.keystrokes else 1.0
    assert st_.accuracy == pytest.approx(expected)
    assert (format_accuracy(st_.accuracy) == "100%") == (st_.errors == 0)
    assert 0 <= st_.correct_chars <= st_.keystrokes
    assert 0 <= st_.wpm <= st_.raw_wpm
    assert 0 <= st_.missed <= s.caret <= len(s.target)
    if s.finished:
        assert s.caret == len(s.target)
    # The screen always shows the target itself, extras aside, and the caret at most once.
    carets = 0
    for row, line in enumerate(s.lines):
        runs = s.line_segments(row)
        shown = "".join(text for text, status in runs if status != EXTRA)
        carets += sum(status == CARET for _, status in runs)
        assert shown in (line, line + " ")
    assert carets <= 1
    extras = sum(len(s.extra_at(p)) for p in range(len(s.target) + 1))
    assert len(s.typed_text) == s.caret - st_.missed + extras


@settings(max_examples=300, deadline=None)
@given(target=TARGETS, keys=KEYS)
def test_random_keystrokes_keep_the_figures_consistent(target: str, keys: list[str]) -> None:
    clock = FakeClock(0.0)
    s = TypingSession(target, clock=clock)
    check_invariants(s)
    for key in keys:
        replay(s, key, clock, step=0.2)
        check_invariants(s)


@settings(max_examples=300, deadline=None)
@given(typing=noisy_typing())
def test_noisy_typing_keeps_the_figures_consistent(typing: tuple[str, list[str]]) -> None:
    target, keys = typing
    clock = FakeClock(0.0)
    s = TypingSession(target, clock=clock)
    check_invariants(s)
    for key in keys:
        replay(s, key, clock, step=0.2)
        check_invariants(s)


@settings(max_examples=300, deadline=None)
@given(typing=st.one_of(noisy_typing(), st.tuples(TARGETS, KEYS)))
def test_backspace_undoes_exactly_one_keystroke(typing: tuple[str, list[str]]) -> None:
    target, keys = typing
    s = TypingSession(target)
    for key in keys:
        if s.finished:
            break
        before = (s.caret, s.typed_text, s.uncorrected_errors, statuses(s))
        replay(s, key)
        if key == BACKSPACE or s.finished:
            continue
        after = (s.caret, s.typed_text, s.uncorrected_errors, statuses(s))
        if after == before:
            continue  # absorbed
        if key == "\t":
            continue  # a hint is undone one character at a time
        s.backspace()
        assert (s.caret, s.typed_text, s.uncorrected_errors, statuses(s)) == before
        replay(s, key)
