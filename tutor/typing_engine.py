"""The type-along engine: what the learner typed against a target code passage, and the stats.

Plain Python, no Textual and no torch: the widget (`tutor/ui/widgets/typealong.py`) draws what
this module computes, and the tests drive it with a scripted clock.

Model. The target is normalised once (see `normalize`). Typed characters map one to one onto
target positions: the caret is simply `len(typed)`, and every position before it has a status:

- ``correct``   typed, and equal to the target character;
- ``incorrect`` typed, and different (the widget shows the *target* character on red);
- ``auto``      filled in by the engine: the indentation after Enter, and blank lines;
- ``hint``      inserted by Tab (`hint()`), not typed.

Positions from the caret on are ``pending`` (the caret cell itself renders as ``caret``).
The session ends when every target position is filled, mistakes or not, except that a wrong
*last* character waits (monkeytype does the same): Backspace fixes it, Enter accepts it.

Figures (monkeytype's definitions, adapted to keystrokes; 1 "word" = 5 characters):

- keystrokes: characters typed, Enter included; backspace and Tab are not keystrokes.
- errors: keystrokes that did not match the target, even when later corrected.
- accuracy = correct keystrokes / keystrokes (1.0 before the first one).
- raw WPM = (keystrokes / 5) / minutes: all typing effort, deleted characters too.
- net WPM = (correct characters / 5 - uncorrected errors) / minutes, at least 0. "Correct
  characters" are positions now holding a correctly typed character (not auto, not hint);
  "uncorrected errors" are positions now holding a wrong one. This is the classic
  net = gross - uncorrected errors per minute, with gross counted on correct characters only so
  that mistakes typed and deleted earn nothing.
- elapsed: from the first input (type, Enter or Tab) to the moment the session finished (or
  now, while typing).
"""

from __future__ import annotations

import bisect
import itertools
import re
import textwrap
import time
from dataclasses import dataclass
from typing import Callable

CORRECT = "correct"
INCORRECT = "incorrect"
AUTO = "auto"
HINT = "hint"
PENDING = "pending"
CARET = "caret"

Run = tuple[str, str]  # (text, status): a stretch of one line with one status

# The next "word" for a hint: leading spaces, the rest of a token, then the spaces after it
# (monkeytype-style words own their trailing space). Never crosses a newline.
_WORD = re.compile(r" *[^\s]* *")


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


@dataclass(frozen=True)
class TypingStats:
    wpm: float
    raw_wpm: float
    accuracy: float  # 0..1
    errors: int
    hints: int
    elapsed: float  # seconds
    keystrokes: int
    correct_chars: int
    uncorrected_errors: int


class TypingSession:
    """One attempt at typing `target`. Every operation is O(1) amortised, or O(indent)."""

    def __init__(self, target: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.target = normalize(target)
        self.lines = self.target.split("\n")
        # Offset of the first character of every line, for position -> row in O(log n).
        self._line_starts = [0]
        for line in self.lines[:-1]:
            self._line_starts.append(self._line_starts[-1] + len(line) + 1)
        self.max_line_length = max((len(line) for line in self.lines), default=0)
        self._clock = clock
        self.reset()

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Start over: nothing typed, figures cleared."""
        self._typed: list[str] = []
        self._status: list[str] = []
        self._correct_chars = 0  # positions holding a correct typed char
        self._wrong_chars = 0  # positions holding an incorrect typed char
        self.keystrokes = 0
        self.correct_keystrokes = 0
        self.errors = 0
        self.hints = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._auto_fill()  # a passage whose first line is indented starts past the indent
        if not self.target:  # nothing to type: done before starting
            self.started_at = self.finished_at = self._clock()

    @property
    def caret(self) -> int:
        """Offset of the next target character to type."""
        return len(self._typed)

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def at_end(self) -> bool:
        """Every position is filled but the last one is wrong: Backspace or Enter decides."""
        return not self.finished and self.caret >= len(self.target)

    @property
    def started(self) -> bool:
        return self.started_at is not None

    @property
    def typed_text(self) -> str:
        """What the learner has typed so far (auto-filled and hinted characters included)."""
        return "".join(self._typed)

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
        return self.caret - self._line_starts[self.caret_row]

    def status_at(self, pos: int) -> str:
        if pos < len(self._status):
            return self._status[pos]
        return CARET if pos == len(self._status) and not self.finished else PENDING

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
        self._start()
        self._keystroke(ch)
        self._check_finished()

    def enter(self) -> None:
        """Newline. At the end of a target line it also fills in the blank lines that follow and
        the next line's indentation; anywhere else it is a mistake like any other."""
        if self.finished:
            return
        if self.at_end:  # accept the wrong last character and finish
            self.finished_at = self._clock()
            return
        self._start()
        if self._keystroke("\n"):
            self._auto_fill()
        self._check_finished()

    def backspace(self) -> None:
        """Delete the last typed character, together with the auto-filled run it produced
        (so one backspace at the start of a line's code goes back to the end of the line
        above). Auto-filled text with nothing typed before it stays. No-op once finished."""
        if self.finished:
            return
        k = len(self._status)
        while k > 0 and self._status[k - 1] == AUTO:
            k -= 1
        if k == 0:
            return
        while len(self._status) >= k:
            self._pop()

    def hint(self) -> None:
        """Tab: insert the rest of the current word (or the newline and next indentation)."""
        if self.finished or self.at_end:
            return
        self._start()
        pos = self.caret
        if self.target[pos] == "\n":
            self._push("\n", HINT)
            self._auto_fill()
        else:
            match = _WORD.match(self.target, pos)
            assert match is not None and match.end() > pos  # trailing spaces were stripped
            for ch in match.group():
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
            net = max(0.0, (self._correct_chars / 5.0 - self._wrong_chars) / minutes)
        else:
            raw = net = 0.0
        accuracy = self.correct_keystrokes / self.keystrokes if self.keystrokes else 1.0
        return TypingStats(wpm=net, raw_wpm=raw, accuracy=accuracy, errors=self.errors,
                           hints=self.hints, elapsed=elapsed, keystrokes=self.keystrokes,
                           correct_chars=self._correct_chars,
                           uncorrected_errors=self._wrong_chars)

    # -- rendering -------------------------------------------------------------------------

    def line_segments(self, row: int) -> list[Run]:
        """Runs of (text, status) for one target line, O(length of the line).

        The text is the target's. A newline cell (or the end of the text) is shown as one
        space, only when it is the caret or a mistake (a character typed where the line
        should have ended).
        """
        start = self._line_starts[row]
        end = start + len(self.lines[row])  # offset of the line's newline (or of the end)
        status_at = self.status_at
        runs: list[Run] = []
        for status, group in itertools.groupby(range(start, end), status_at):
            positions = list(group)
            runs.append((self.target[positions[0]:positions[-1] + 1], status))
        if end < len(self.target) or end == self.caret:
            status = status_at(end)
            if status in (CARET, INCORRECT):
                runs.append((" ", status))
        return runs

    def segments(self, first_row: int, last_row: int) -> list[list[Run]]:
        """`line_segments` for rows first_row <= row < last_row (clipped to the text)."""
        return [self.line_segments(r)
                for r in range(max(0, first_row), min(last_row, self.line_count))]

    # -- internals -------------------------------------------------------------------------

    def _start(self) -> None:
        if self.started_at is None:
            self.started_at = self._clock()

    def _keystroke(self, ch: str) -> bool:
        """Type `ch` at the caret; True when it matched."""
        ok = ch == self.target[self.caret]
        self._push(ch, CORRECT if ok else INCORRECT)
        self.keystrokes += 1
        if ok:
            self.correct_keystrokes += 1
        else:
            self.errors += 1
        return ok

    def _auto_fill(self) -> None:
        """At a line start: fill blank lines, then the indentation, as `auto`."""
        t, n = self.target, len(self.target)
        while self.caret < n and t[self.caret] == "\n":
            self._push("\n", AUTO)
        while self.caret < n and t[self.caret] == " ":
            self._push(" ", AUTO)

    def _check_finished(self) -> None:
        if (self.finished_at is None and self.caret >= len(self.target)
                and (not self._status or self._status[-1] != INCORRECT)):
            self.finished_at = self._clock()

    def _push(self, ch: str, status: str) -> None:
        self._typed.append(ch)
        self._status.append(status)
        if status == CORRECT:
            self._correct_chars += 1
        elif status == INCORRECT:
            self._wrong_chars += 1

    def _pop(self) -> None:
        self._typed.pop()
        status = self._status.pop()
        if status == CORRECT:
            self._correct_chars -= 1
        elif status == INCORRECT:
            self._wrong_chars -= 1
