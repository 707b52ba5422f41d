"""Progress, hints, run history and typing statistics, kept in SQLite in the tutor home.

Safe for several processes at once (the app and `tutor check`): WAL journal, a busy timeout,
and every write in its own transaction. A corrupt file is moved aside and a fresh one started.
Plain Python: no torch, no Textual.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DB_NAME = "progress.sqlite3"

# Each entry migrates the schema from version i to i + 1. Append, never edit.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE exercise (
        exercise TEXT PRIMARY KEY,
        status TEXT NOT NULL DEFAULT 'new',      -- new | started | passed
        hints_used INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        passed_at REAL
    );
    CREATE TABLE run (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        exercise TEXT NOT NULL,
        at REAL NOT NULL,
        role TEXT NOT NULL DEFAULT 'learner',    -- learner | solution | stub
        status TEXT NOT NULL,                    -- passed | failed | error | timeout | skipped
        reason TEXT NOT NULL DEFAULT '',
        figures TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX run_by_exercise ON run (exercise, at);
    CREATE TABLE typing (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        passage TEXT NOT NULL,
        at REAL NOT NULL,
        wpm REAL NOT NULL,
        raw_wpm REAL NOT NULL,
        accuracy REAL NOT NULL,
        errors INTEGER NOT NULL,
        hints INTEGER NOT NULL,
        seconds REAL NOT NULL
    );
    CREATE INDEX typing_by_passage ON typing (passage, at);
    CREATE TABLE passage (
        passage TEXT PRIMARY KEY,
        done_at REAL NOT NULL
    );
    CREATE TABLE state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
]


class ProgressError(Exception):
    """The progress database cannot be used (disk full, no permission)."""


@dataclass(frozen=True)
class ExerciseProgress:
    exercise: str
    status: str
    hints_used: int
    updated_at: float | None
    passed_at: float | None


@dataclass(frozen=True)
class RunRecord:
    exercise: str
    at: float
    role: str
    status: str
    reason: str
    figures: dict[str, Any]


@dataclass(frozen=True)
class TypingRecord:
    passage: str
    at: float
    wpm: float
    raw_wpm: float
    accuracy: float
    errors: int
    hints: int
    seconds: float


class Progress:
    """The learner's progress database. Open one per process; cheap to create."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / DB_NAME
        self.notice: str | None = None  # set when a corrupt file was moved aside
        try:
            home.mkdir(parents=True, exist_ok=True)
            self._db = self._open()
        except sqlite3.OperationalError as exc:
            # Locked, busy, disk I/O, a schema changing under us: not damage. Never move a
            # database aside for these; that would lose another process's progress.
            raise ProgressError(f"cannot open {self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            if not self.path.exists():
                raise ProgressError(f"cannot open {self.path}: {exc}") from None
            self._db = self._recover()
        except OSError as exc:
            raise ProgressError(f"cannot open {self.path}: {exc.strerror or exc}") from None

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA journal_mode = WAL")
        # Touch the file's content so a corrupt database fails here, not later.
        db.execute("PRAGMA quick_check").fetchall()
        self._migrate(db)
        return db

    def _recover(self) -> sqlite3.Connection:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.rename(Path(str(aside) + suffix))
        self.notice = (f"The progress database was damaged; it was moved to {aside.name} "
                       f"and a fresh one started. Your code in the workspace is untouched.")
        return self._open()

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        # Several processes may open a new database at once (the app and `tutor check`): read
        # the version inside the write transaction, so each migration runs exactly once.
        while True:
            with _transaction(db):
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > len(MIGRATIONS):
                    raise ProgressError(f"the progress database is from a newer tutor (schema {version})")
                if version == len(MIGRATIONS):
                    return
                # executescript would commit on its own; run statements one by one instead.
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")

    @property
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        try:
            with _transaction(self._db):
                self._db.execute(sql, args)
        except sqlite3.OperationalError as exc:
            raise ProgressError(f"cannot save progress to {self.path}: {exc}") from None

    # -- exercises -----------------------------------------------------------------------------

    def exercise(self, exercise: str) -> ExerciseProgress:
        row = self._db.execute("SELECT * FROM exercise WHERE exercise = ?", (exercise,)).fetchone()
        if row is None:
            return ExerciseProgress(exercise, "new", 0, None, None)
        return ExerciseProgress(row["exercise"], row["status"], row["hints_used"],
                                row["updated_at"], row["passed_at"])

    def all_exercises(self) -> dict[str, ExerciseProgress]:
        rows = self._db.execute("SELECT * FROM exercise").fetchall()
        return {r["exercise"]: ExerciseProgress(r["exercise"], r["status"], r["hints_used"],
                                                r["updated_at"], r["passed_at"]) for r in rows}

    def mark_started(self, exercise: str) -> None:
        self._write("""INSERT INTO exercise (exercise, status, updated_at) VALUES (?, 'started', ?)
                       ON CONFLICT(exercise) DO UPDATE SET updated_at = excluded.updated_at,
                       status = CASE WHEN status = 'new' THEN 'started' ELSE status END""",
                    (exercise, time.time()))

    def mark_passed(self, exercise: str) -> None:
        now = time.time()
        self._write("""INSERT INTO exercise (exercise, status, updated_at, passed_at)
                       VALUES (?, 'passed', ?, ?)
                       ON CONFLICT(exercise) DO UPDATE SET status = 'passed',
                       updated_at = excluded.updated_at,
                       passed_at = COALESCE(passed_at, excluded.passed_at)""",
                    (exercise, now, now))

    def use_hint(self, exercise: str, available: int) -> int:
        """Reveal one more hint (up to `available`); return how many are now revealed."""
        self._write("""INSERT INTO exercise (exercise, status, hints_used, updated_at)
                       VALUES (?, 'started', MIN(1, ?), ?)
                       ON CONFLICT(exercise) DO UPDATE SET
                       hints_used = MIN(hints_used + 1, ?), updated_at = excluded.updated_at""",
                    (exercise, available, time.time(), available))
        return self.exercise(exercise).hints_used

    # -- runs ----------------------------------------------------------------------------------

    def record_run(self, exercise: str, status: str, reason: str = "",
                   figures: dict[str, Any] | None = None, role: str = "learner") -> None:
        self._write("INSERT INTO run (exercise, at, role, status, reason, figures) VALUES (?, ?, ?, ?, ?, ?)",
                    (exercise, time.time(), role, status, reason, json.dumps(figures or {})))
        if role == "learner":
            if status == "passed":
                self.mark_passed(exercise)
            else:
                self.mark_started(exercise)

    def runs(self, exercise: str | None = None, limit: int = 50) -> list[RunRecord]:
        if exercise is None:
            rows = self._db.execute("SELECT * FROM run ORDER BY at DESC, id DESC LIMIT ?", (limit,))
        else:
            rows = self._db.execute("SELECT * FROM run WHERE exercise = ? ORDER BY at DESC, id DESC LIMIT ?",
                                    (exercise, limit))
        return [RunRecord(r["exercise"], r["at"], r["role"], r["status"], r["reason"],
                          json.loads(r["figures"])) for r in rows.fetchall()]

    # -- typing --------------------------------------------------------------------------------

    def record_typing(self, rec: TypingRecord) -> None:
        self._write("""INSERT INTO typing (passage, at, wpm, raw_wpm, accuracy, errors, hints, seconds)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                    (rec.passage, rec.at, rec.wpm, rec.raw_wpm, rec.accuracy, rec.errors,
                     rec.hints, rec.seconds))
        self._write("INSERT OR IGNORE INTO passage (passage, done_at) VALUES (?, ?)",
                    (rec.passage, rec.at))

    def typing_history(self, passage: str | None = None) -> list[TypingRecord]:
        if passage is None:
            rows = self._db.execute("SELECT * FROM typing ORDER BY at, id")
        else:
            rows = self._db.execute("SELECT * FROM typing WHERE passage = ? ORDER BY at, id", (passage,))
        return [TypingRecord(r["passage"], r["at"], r["wpm"], r["raw_wpm"], r["accuracy"],
                             r["errors"], r["hints"], r["seconds"]) for r in rows.fetchall()]

    def passages_done(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT passage FROM passage").fetchall()}

    # -- where the learner is ------------------------------------------------------------------

    def get_state(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_state(self, key: str, value: str) -> None:
        self._write("INSERT INTO state (key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def last_position(self) -> tuple[int, str | None] | None:
        """The chapter number and step id the learner was last at, if any."""
        raw = self.get_state("position")
        if not raw:
            return None
        chapter, _, step = raw.partition("/")
        try:
            return int(chapter), step or None
        except ValueError:
            return None

    def set_position(self, chapter: int, step: str | None = None) -> None:
        self.set_state("position", f"{chapter}/{step or ''}")

    def last_activity(self, exercises: list[str]) -> float | None:
        if not exercises:
            return None
        marks = ",".join("?" * len(exercises))
        row = self._db.execute(f"SELECT MAX(updated_at) FROM exercise WHERE exercise IN ({marks})",
                               exercises).fetchone()
        return row[0]


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on error (the connection is in autocommit mode)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")

