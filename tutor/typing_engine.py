"""The type-along engine: what the learner typed against a target code passage, and the stats.

Plain Python, no Textual and no torch: the widget (`tutor/ui/widgets/typealong.py`) draws what
this module computes, and the tests drive it with a scripted clock.

Model. The target is normalised once (see `normalize`). The caret is a target offset; every
target position before it has a status:

- ``correct``   typed, and equal to the target character;
- ``incorrect`` typed, and different (the widget shows the *target* character on red);
- ``auto``      filled in by the engine: blank lines and indentation after Enter, and the rest
  of a run of spaces inside a line (alignment) after its first space;
- ``hint``      inserted by Tab (`hint()`), not typed;
- ``missed``    skipped: a space typed inside a word skips the rest of the word, an Enter
  typed inside a line skips the rest of the line (monkeytype resynchronises the same way, so
  one slip costs at most one word and never shifts the rest of the passage).

Two wrong characters in a row that are exactly the next two target characters mean one was
left out ("forwrd"): the key before is re-read one position on, so the slip is one error and
one missed character. A non-space character typed where the target has a space or the end of
a line is an ``extra`` character: shown in red before the caret, kept in the typed code, and
it does not move the caret (so the next word still lines up). Positions from the caret on are
``pending``.

Lenient where code typists are lenient: these keys are *absorbed* (ignored, not keystrokes):
Enter on a line where nothing has been typed yet (a blank line, already filled in), spaces
before the first character of a word (indentation typed by hand, the rest of an alignment run,
a double space), and spaces at the end of a line.

The session ends when every target position is filled, except that a mistake in the *last*
keystroke waits (monkeytype does the same): Backspace fixes it, Enter accepts it. Backspace
undoes one keystroke together with what it filled in or skipped.

Figures (1 "word" = 5 characters), the same definitions as the F1 help:

- keystrokes: keys that typed into the passage: characters, space and Enter. Absorbed keys,
  Backspace and Tab are not keystrokes.
- errors: keystrokes that did not match: a wrong or extra character, or a space/Enter that
  skipped part of a word or line. Each counts once, even when later corrected.
- uncorrected errors: those still in the code (not deleted with Backspace); always <= errors.
- accuracy = (keystrokes - errors) / keystrokes (1.0 before the first one): 100% exactly when
  errors is 0; shown rounded *down* (`format_accuracy`), so 100% and an error never appear
  together.
- raw WPM = (keystrokes / 5) / minutes: all typing effort, deleted characters too.
- net WPM = (correct characters / 5 - uncorrected errors) / minutes, at least 0. "Correct
  characters" are target positions now holding a correctly typed character (not auto, hint or
  missed): mistakes typed and deleted earn nothing, mistakes left cost a word each.
- missed: target characters skipped by a space or Enter, not typed at all.
- elapsed: from the first keystroke or hint to the moment the session finished (or now).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import textwrap
import time
from dataclasses import dataclass
from typing import Callable

from tutor.i18n import N_

CORRECT = "correct"
INCORRECT = "incorrect"
AUTO = "auto"
HINT = "hint"
MISSED = "missed"
EXTRA = "extra"
PENDING = "pending"
CARET = "caret"

_RESYNC = "resync"  # a group that re-read the key before it (see `_left_out_one`)

Run = tuple[str, str]  # (text, status): a stretch of one line with one status

# The next "word" for a hint: leading spaces, the rest of a token, then the spaces after it
# (monkeytype-style words own their trailing space). Never crosses a newline.
_WORD = re.compile(r" *[^\s]* *")


# The type-along section of the F1 help: what the engine does and what the figures mean (the
# definitions above, in the learner's words).
HELP = [
    N_(
        "Indentation and blank lines are filled in for you: after Enter at the end of a line you "
        "go on at the next line's code. Typing the indentation yourself or pressing Enter on a "
        "blank line is fine too (those keys are ignored), and a run of spaces inside a line, such "
        "as before an aligned comment, can be typed as one space."
    ),
    N_("Tab types the next word for you (counted as a hint). Backspace undoes your last key. Ctrl+T starts over."),
    N_(
        "A wrong character is red at its own place only, and a letter left out shows struck "
        "through (missed) as one error. A space inside a word skips the rest of "
        "the word and Enter inside a line skips the rest of the line: the skipped characters are "
        "struck through (missed) and everything after stays lined up. A character typed past the "
        "end of a word or line shows in red as an extra."
    ),
    N_(
        "Keystrokes: keys that typed into the passage (ignored keys, Backspace and Tab are not). "
        "Errors: keystrokes that did not match (a wrong or extra character, a space or Enter that "
        "skipped something), each counted once even after you fix it; uncorrected: those still in "
        "your code."
    ),
    N_(
        "Accuracy = (keystrokes − errors) ÷ keystrokes, rounded down, so it reads 100% only with "
        "0 errors. Raw WPM = keystrokes ÷ 5 per minute. WPM = correctly typed characters ÷ 5 per "
        "minute, less one word per uncorrected error. The clock runs from your first key to the "
        "last."
    ),
    N_(
        "When you finish: your first attempts as numbers, from the third on a sparkline of WPM and "
        "accuracy over your attempts. `tutor stats` sums them up per chapter."
    ),
]


def normalize(target: str) -> str:
    """The text the learner actually types.

    Tabs become 4 spaces (Tab is the hint key, so a tab cannot be typed), trailing whitespace
    of every line goes (invisible, so it must not be required), leading and trailing blank lines
    go, and a common indentation is removed.
    """
    text = target.replace("\r\n", "\n").replace("\r", "\n").expandtabs(4)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return textwrap.dedent("\n".join(lines))


def format_accuracy(accuracy: float) -> str:
    """ "100%" only for a perfect score; anything less is rounded down to a tenth ("99.6%"), so
    a single error among a thousand keystrokes never reads as 100%."""
    if accuracy >= 1.0:
        return "100%"
    tenths = max(0, min(999, math.floor(accuracy * 1000 + 1e-9)))
    return f"{tenths / 10:.1f}%"


@dataclass(frozen=True)
class TypingStats:
    wpm: float  # net
    raw_wpm: float
    accuracy: float  # 0..1
    errors: int
    hints: int
    elapsed: float  # seconds
    keystrokes: int
    correct_chars: int
    uncorrected_errors: int
    missed: int = 0


@dataclass(frozen=True)
class _Group:
    """One undoable input: a keystroke or hinted character, with what it filled in or skipped."""

    kind: str  # EXTRA (no target position) or anything else
    caret_before: int
    errors: int  # 0 or 1


class TypingSession:
    """One attempt at typing `target`. Every operation is O(1) amortised, or O(line)."""

    def __init__(self, target: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.target = normalize(target)
        self.lines = self.target.split("\n")
        # Offset of the first character of every line, for position -> row in O(log n).
        self._line_starts = [0]
        for line in self.lines[:-1]:
            self._line_starts.append(self._line_starts[-1] + len(line) + 1)
        self.max_line_length = max((len(line) for line in self.lines), default=0)
        self._clock = clock
        self.revision = 0  # moves on at every change, so a view knows when to repaint
        self.reset()

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Start over: nothing typed, figures cleared."""
        self._status: list[str] = []  # per target position before the caret
        self._chars: list[str] = []  # what stands there in the learner's code ("" if missed)
        self._extra: dict[int, list[str]] = {}  # position -> extra chars typed before it
        self._groups: list[_Group] = []
        self._correct_chars = 0  # positions holding a correct typed char
        self._missed = 0
        self._live_errors = 0  # errors of the groups still standing
        self.keystrokes = 0
        self.errors = 0
        self.hints = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.revision += 1
        self._auto_fill()  # a passage whose first line is indented starts past the indent
        if not self.target:  # nothing to type: done before starting
            self.started_at = self.finished_at = self._clock()

    @property
    def caret(self) -> int:
        """Offset of the next target character to type."""
        return len(self._status)

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def at_end(self) -> bool:
        """Every position is filled but the last keystroke was a mistake: Backspace or Enter."""
        return not self.finished and self.caret >= len(self.target)

    @property
    def started(self) -> bool:
        return self.started_at is not None

    @property
    def correct_keystrokes(self) -> int:
        return self.keystrokes - self.errors

    @property
    def uncorrected_errors(self) -> int:
        return self._live_errors

    @property
    def typed_text(self) -> str:
        """The learner's code so far: typed, auto-filled and hinted characters, extras included,
        missed ones left out."""
        parts: list[str] = []
        for pos, ch in enumerate(self._chars):
            parts.extend(self._extra.get(pos, ()))
            parts.append(ch)
        parts.extend(self._extra.get(self.caret, ()))
        return "".join(parts)

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def row_of(self, pos: int) -> int:
        """The target line holding offset `pos` (a newline belongs to the line it ends)."""
        return bisect.bisect_right(self._line_starts, pos) - 1

    @property
    def caret_row(self) -> int:
        return self.row_of(self.caret)

    @property
    def caret_col(self) -> int:
        """The caret's column in the target line."""
        return self.caret - self._line_starts[self.caret_row]

    @property
    def caret_screen_col(self) -> int:
        """The caret's column on screen: extra characters typed on its line push it right."""
        row = self.caret_row
        start = self._line_starts[row]
        return self.caret_col + sum(len(self._extra.get(p, ())) for p in range(start, self.caret + 1))

    def status_at(self, pos: int) -> str:
        if pos < len(self._status):
            return self._status[pos]
        return CARET if pos == len(self._status) and not self.finished else PENDING

    def extra_at(self, pos: int) -> str:
        """Extra characters typed before target position `pos`."""
        return "".join(self._extra.get(pos, ()))

    # -- input -----------------------------------------------------------------------------

    def type_char(self, ch: str) -> None:
        """One typed character; "\\n" is Enter and "\\t" is Tab."""
        if ch == "\n":
            self.enter()
            return
        if ch == "\t":
            self.hint()
            return
        if len(ch) != 1 or self.finished or self.at_end:
            return
        pos = self.caret
        expected = self.target[pos]
        if ch == " ":
            if expected == " ":
                self._begin(errors=0)
                self._push(" ", CORRECT)
                self._fill_spaces()
            elif expected == "\n" or self._at_word_start():
                return  # absorbed: trailing space, indentation, the rest of an alignment run
            else:  # inside a word: skip its rest, resynchronise on the next word
                self._begin(errors=1)
                self._skip_to(" \n")
                if self.target[self.caret : self.caret + 1] == " ":
                    self._push(" ", CORRECT)
                    self._fill_spaces()
        elif expected in " \n":  # an extra character at the end of a word or line
            self._begin(errors=1, kind=EXTRA)
            self._extra.setdefault(pos, []).append(ch)
        elif ch != expected and self._left_out_one(ch):
            pass
        else:
            self._begin(errors=int(ch != expected))
            self._push(ch, CORRECT if ch == expected else INCORRECT)
        self._check_finished()

    def enter(self) -> None:
        """Enter. At the end of a line: the newline, then the blank lines and indentation that
        follow are filled in. On a line with nothing typed yet: absorbed. Inside a line: skips
        its rest (missed) and goes on at the next line, which does not shift."""
        if self.finished:
            return
        if self.at_end:  # accept the mistake in the last keystroke and finish
            self.finished_at = self._clock()
            self.revision += 1
            return
        if self.target[self.caret] == "\n":
            self._begin(errors=0)
        elif self._line_untouched():
            return
        else:
            self._begin(errors=1)
            self._skip_to("\n")
            if self.caret >= len(self.target):  # the last line: Enter finishes it
                self.finished_at = self._clock()
                return
        self._push("\n", CORRECT)
        self._auto_fill()
        self._check_finished()

    def backspace(self) -> None:
        """Undo the last keystroke (or hinted character) with what it filled in or skipped, so
        one backspace at the start of a line's code goes back to the end of the line above.
        Auto-filled text with nothing typed before it stays. No-op once finished."""
        if self.finished or not self._groups:
            return
        group = self._groups.pop()
        self.revision += 1
        self._live_errors -= group.errors
        if group.kind == EXTRA:
            extras = self._extra[self.caret]
            extras.pop()
            if not extras:
                del self._extra[self.caret]
            return
        while len(self._status) > group.caret_before:
            self._pop()
        if group.kind == _RESYNC:  # back to reading the key before as a wrong character
            typed = self._chars[-1]
            self._pop()
            self._pop()
            self._push(typed, INCORRECT)

    def hint(self) -> None:
        """Tab: insert the rest of the current word (or the newline and next indentation)."""
        if self.finished or self.at_end:
            return
        self._start()
        self.revision += 1
        pos = self.caret
        if self.target[pos] == "\n":
            self._groups.append(_Group(HINT, pos, 0))
            self._push("\n", HINT)
            self._auto_fill()
        else:
            match = _WORD.match(self.target, pos)
            assert match is not None and match.end() > pos  # trailing spaces were stripped
            for ch in match.group():
                self._groups.append(_Group(HINT, self.caret, 0))  # Backspace: a char at a time
                self._push(ch, HINT)
        self.hints += 1
        self._check_finished()

    # -- figures ---------------------------------------------------------------------------

    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        end = self.finished_at if self.finished_at is not None else self._clock()
        return max(0.0, end - self.started_at)

    def stats(self) -> TypingStats:
        elapsed = self.elapsed()
        minutes = elapsed / 60.0
        if minutes > 0:
            raw = self.keystrokes / 5.0 / minutes
            net = max(0.0, (self._correct_chars / 5.0 - self._live_errors) / minutes)
        else:
            raw = net = 0.0
        accuracy = self.correct_keystrokes / self.keystrokes if self.keystrokes else 1.0
        return TypingStats(
            wpm=net,
            raw_wpm=raw,
            accuracy=accuracy,
            errors=self.errors,
            hints=self.hints,
            elapsed=elapsed,
            keystrokes=self.keystrokes,
            correct_chars=self._correct_chars,
            uncorrected_errors=self._live_errors,
            missed=self._missed,
        )

    # -- rendering -------------------------------------------------------------------------

    def line_segments(self, row: int) -> list[Run]:
        """Runs of (text, status) for one target line, O(length of the line).

        The text is the target's, with the learner's extra characters as ``extra`` runs where
        they were typed. A newline cell (or the end of the text) is shown as one space, only
        when it holds the caret.
        """
        start = self._line_starts[row]
        end = start + len(self.lines[row])  # offset of the line's newline (or of the end)
        status_at = self.status_at
        runs: list[Run] = []
        extra = self._extra
        # Cut the line where extras were typed; between cuts, group by status.
        cuts = [p for p in range(start, end + 1) if p in extra] if extra else []
        piece_start = start
        for cut in [*cuts, None]:
            piece_end = end if cut is None else cut
            for status, group in itertools.groupby(range(piece_start, piece_end), status_at):
                positions = list(group)
                runs.append((self.target[positions[0] : positions[-1] + 1], status))
            if cut is not None:
                runs.append(("".join(extra[cut]), EXTRA))
                piece_start = cut
        if (end < len(self.target) or end == self.caret) and status_at(end) == CARET:
            runs.append((" ", CARET))
        return runs

    def segments(self, first_row: int, last_row: int) -> list[list[Run]]:
        """`line_segments` for rows first_row <= row < last_row (clipped to the text)."""
        return [self.line_segments(r) for r in range(max(0, first_row), min(last_row, self.line_count))]

    # -- internals -------------------------------------------------------------------------

    def _start(self) -> None:
        if self.started_at is None:
            self.started_at = self._clock()

    def _begin(self, errors: int, kind: str = CORRECT) -> None:
        """A keystroke that types into the passage: start the clock, count it, open its group."""
        self._start()
        self.revision += 1
        self.keystrokes += 1
        self.errors += errors
        self._live_errors += errors
        self._groups.append(_Group(kind, self.caret, errors))

    def _left_out_one(self, ch: str) -> bool:
        """Two wrong keys in a row that are exactly the next two target characters: the
        learner left one character out ("forwrd"). Re-read the key before one position on, so
        the slip costs one error and one missed character, not the rest of the word."""
        p, t = self.caret, self.target
        if p < 1 or p + 1 >= len(t) or not self._groups or any(c in " \n" for c in t[p - 1 : p + 2]):
            return False
        last = self._groups[-1]
        if last.kind != CORRECT or last.caret_before != p - 1 or self._status[p - 1] != INCORRECT:
            return False
        typed = self._chars[p - 1]
        if typed != t[p] or ch != t[p + 1]:
            return False
        self._pop()
        self._push("", MISSED)  # still the error the key before counted
        self._push(typed, CORRECT)
        self._begin(errors=0, kind=_RESYNC)
        self._push(ch, CORRECT)
        return True

    def _at_word_start(self) -> bool:
        """Nothing typed of the word at the caret yet (a space there is no skip)."""
        pos = self.caret
        return (pos == 0 or self.target[pos - 1] in " \n") and pos not in self._extra

    def _line_untouched(self) -> bool:
        """Nothing typed on the caret's line: only auto-filled indentation before the caret."""
        start = self._line_starts[self.caret_row]
        return self.caret not in self._extra and all(self._status[p] == AUTO for p in range(start, self.caret))

    def _skip_to(self, stops: str) -> None:
        """Mark target characters missed up to (not including) the next one in `stops`."""
        t, n = self.target, len(self.target)
        while self.caret < n and t[self.caret] not in stops:
            self._push("", MISSED)

    def _fill_spaces(self) -> None:
        """After a typed space: the rest of a run of spaces (alignment) is filled in."""
        t, n = self.target, len(self.target)
        while self.caret < n and t[self.caret] == " ":
            self._push(" ", AUTO)

    def _auto_fill(self) -> None:
        """At a line start: fill blank lines, then the indentation, as `auto`."""
        t, n = self.target, len(self.target)
        while self.caret < n and t[self.caret] == "\n":
            self._push("\n", AUTO)
        self._fill_spaces()

    def _check_finished(self) -> None:
        if (
            self.finished_at is None
            and self.caret >= len(self.target)
            and (not self._groups or self._groups[-1].errors == 0)
        ):
            self.finished_at = self._clock()

    def _push(self, ch: str, status: str) -> None:
        self._chars.append(ch)
        self._status.append(status)
        if status == CORRECT:
            self._correct_chars += 1
        elif status == MISSED:
            self._missed += 1

    def _pop(self) -> None:
        self._chars.pop()
        status = self._status.pop()
        if status == CORRECT:
            self._correct_chars -= 1
        elif status == MISSED:
            self._missed -= 1
