"""Progress, hints, run history and typing statistics, kept in SQLite in the tutor home.

Safe for several processes at once (the app and `tutor check`): WAL journal, a busy timeout,
and every write in its own transaction. A damaged file, found when it is opened or at any
later read or write, is moved aside and a fresh one started with every row that could still be
read (passes, hints, runs, typing history, position); `notice` says so and `on_notice` is
called at once so the app can show it.

A pass counts only with its seal: an HMAC, keyed by a file in the tutor home, over the
exercise and the time of the pass, written when the app or the CLI received a passing
verdict. A row that learner code inserts into the database does not count.
Plain Python: no torch, no Textual.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from tutor.status import Status

T = TypeVar("T")

DB_NAME = "progress.sqlite3"
KEY_NAME = ".progress-key"

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
    # 2: passes carry a seal; passes recorded before seals existed are sealed by _migrate.
    """
    ALTER TABLE exercise ADD COLUMN seal TEXT;
    """,
]
_TABLES = ("exercise", "run", "typing", "passage", "state")


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

    def __init__(self, home: Path, on_notice: Callable[[str], None] | None = None) -> None:
        self.home = home
        self.path = home / DB_NAME
        self.notice: str | None = None  # set when a damaged file was moved aside
        self.on_notice = on_notice
        try:
            home.mkdir(parents=True, exist_ok=True)
            self._key = self._load_key()
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

    def _load_key(self) -> bytes:
        path = self.home / KEY_NAME
        try:
            key = path.read_bytes()
            if len(key) >= 32:
                return key
        except FileNotFoundError:
            pass
        # Written whole under another name, then linked into place: a process that opens a new
        # home at the same moment sees no key or the whole key, never half of one, and the
        # first link wins.
        import secrets  # only when a new home gets its key

        key = secrets.token_bytes(32)
        tmp = self.home / f"{KEY_NAME}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        try:
            os.link(tmp, path)
        except FileExistsError:
            key = path.read_bytes()
        finally:
            tmp.unlink(missing_ok=True)
        return key

    def _seal(self, exercise: str, passed_at: float | None) -> str:
        import hashlib  # here: the first paint of `tutor start` does not need them
        import hmac

        return hmac.new(self._key, f"{exercise}|{passed_at!r}".encode(), hashlib.sha256).hexdigest()

    def _sealed(self, row: sqlite3.Row) -> bool:
        seal = row["seal"] if "seal" in row.keys() else None
        import hmac

        return isinstance(seal, str) and hmac.compare_digest(seal, self._seal(row["exercise"], row["passed_at"]))

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA journal_mode = WAL")
        # Touch the file's content so a corrupt database fails here, not later.
        db.execute("PRAGMA quick_check").fetchall()
        self._migrate(db, self._seal)
        return db

    def _recover(self) -> sqlite3.Connection:
        """Move the damaged file aside, start afresh, and copy in every row still readable."""
        try:
            self._db.close()
        except Exception:
            pass
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.rename(Path(str(aside) + suffix))
        db = self._open()
        saved = _salvage(aside, db)
        kept = ", ".join(f"{n} {what}" for what, n in saved.items() if n) or "nothing could be read back"
        self._set_notice(
            f"The progress database was damaged; it was moved to {aside.name} and a fresh "
            f"one started ({kept}). Your code in the workspace is untouched."
        )
        return db

    def _set_notice(self, text: str) -> None:
        self.notice = text
        if self.on_notice is not None:
            try:
                self.on_notice(text)
            except Exception:
                pass

    def _guard(self, action: Callable[[], T], what: str) -> T:
        """Run a read or write; damage found now is recovered from and the action retried once."""
        try:
            return action()
        except sqlite3.OperationalError as exc:
            raise ProgressError(f"cannot {what} {self.path}: {exc}") from None
        except sqlite3.DatabaseError:
            try:
                self._db = self._recover()
                return action()
            except (sqlite3.Error, OSError) as exc:
                raise ProgressError(f"cannot {what} {self.path}: {exc}") from None
        except sqlite3.Error as exc:
            raise ProgressError(f"cannot {what} {self.path}: {exc}") from None

    def _query(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
        return self._guard(lambda: self._db.execute(sql, args).fetchall(), "read")

    @staticmethod
    def _migrate(db: sqlite3.Connection, seal: Callable[[str, float | None], str] | None = None) -> None:
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
                if version == 1 and seal is not None:
                    # Passes recorded before seals existed were the app's and the CLI's own.
                    for row in db.execute(
                        "SELECT exercise, passed_at FROM exercise WHERE status = 'passed'"
                    ).fetchall():
                        db.execute("UPDATE exercise SET seal = ? WHERE exercise = ?", (seal(row[0], row[1]), row[0]))
                db.execute(f"PRAGMA user_version = {version + 1}")

    @property
    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    def close(self) -> None:
        self._db.close()

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        def write() -> None:
            with _transaction(self._db):
                self._db.execute(sql, args)

        self._guard(write, "save progress to")

    # -- exercises -----------------------------------------------------------------------------

    def _row(self, r: sqlite3.Row) -> ExerciseProgress:
        status, passed_at = r["status"], r["passed_at"]
        if status == Status.PASSED and not self._sealed(r):
            status, passed_at = "started", None  # not written by a verdict: does not count
        return ExerciseProgress(r["exercise"], status, r["hints_used"], r["updated_at"], passed_at)

    def exercise(self, exercise: str) -> ExerciseProgress:
        rows = self._query("SELECT * FROM exercise WHERE exercise = ?", (exercise,))
        if not rows:
            return ExerciseProgress(exercise, "new", 0, None, None)
        return self._row(rows[0])

    def all_exercises(self) -> dict[str, ExerciseProgress]:
        return {r["exercise"]: self._row(r) for r in self._query("SELECT * FROM exercise")}

    def mark_started(self, exercise: str) -> None:
        self._write(
            """INSERT INTO exercise (exercise, status, updated_at) VALUES (?, 'started', ?)
                       ON CONFLICT(exercise) DO UPDATE SET updated_at = excluded.updated_at,
                       status = CASE WHEN status = 'new' THEN 'started' ELSE status END""",
            (exercise, time.time()),
        )

    def mark_passed(self, exercise: str) -> None:
        """Record a pass: call it only with a passing verdict from the runner in hand."""
        now = time.time()
        previous = self.exercise(exercise)
        passed_at = previous.passed_at if previous.status == Status.PASSED and previous.passed_at else now
        self._write(
            """INSERT INTO exercise (exercise, status, updated_at, passed_at, seal)
                       VALUES (?, 'passed', ?, ?, ?)
                       ON CONFLICT(exercise) DO UPDATE SET status = 'passed',
                       updated_at = excluded.updated_at, passed_at = excluded.passed_at,
                       seal = excluded.seal""",
            (exercise, now, passed_at, self._seal(exercise, passed_at)),
        )

    def use_hint(self, exercise: str, available: int) -> int:
        """Reveal one more hint (up to `available`); return how many are now revealed."""
        self._write(
            """INSERT INTO exercise (exercise, status, hints_used, updated_at)
                       VALUES (?, 'started', MIN(1, ?), ?)
                       ON CONFLICT(exercise) DO UPDATE SET
                       hints_used = MIN(hints_used + 1, ?), updated_at = excluded.updated_at""",
            (exercise, available, time.time(), available),
        )
        return self.exercise(exercise).hints_used

    # -- runs ----------------------------------------------------------------------------------

    def record_run(
        self, exercise: str, status: str, reason: str = "", figures: dict[str, Any] | None = None, role: str = "learner"
    ) -> None:
        self._write(
            "INSERT INTO run (exercise, at, role, status, reason, figures) VALUES (?, ?, ?, ?, ?, ?)",
            (exercise, time.time(), role, status, reason, json.dumps(figures or {})),
        )
        if role == "learner":
            if status == Status.PASSED:
                self.mark_passed(exercise)
            else:
                self.mark_started(exercise)

    def runs(self, exercise: str | None = None, limit: int = 50) -> list[RunRecord]:
        if exercise is None:
            rows = self._query("SELECT * FROM run ORDER BY at DESC, id DESC LIMIT ?", (limit,))
        else:
            rows = self._query(
                "SELECT * FROM run WHERE exercise = ? ORDER BY at DESC, id DESC LIMIT ?", (exercise, limit)
            )
        return [
            RunRecord(r["exercise"], r["at"], r["role"], r["status"], r["reason"], _json(r["figures"])) for r in rows
        ]

    # -- typing --------------------------------------------------------------------------------

    def record_typing(self, rec: TypingRecord) -> None:
        self._write(
            """INSERT INTO typing (passage, at, wpm, raw_wpm, accuracy, errors, hints, seconds)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (rec.passage, rec.at, rec.wpm, rec.raw_wpm, rec.accuracy, rec.errors, rec.hints, rec.seconds),
        )
        self._write("INSERT OR IGNORE INTO passage (passage, done_at) VALUES (?, ?)", (rec.passage, rec.at))

    def typing_history(self, passage: str | None = None) -> list[TypingRecord]:
        if passage is None:
            rows = self._query("SELECT * FROM typing ORDER BY at, id")
        else:
            rows = self._query("SELECT * FROM typing WHERE passage = ? ORDER BY at, id", (passage,))
        return [
            TypingRecord(
                r["passage"], r["at"], r["wpm"], r["raw_wpm"], r["accuracy"], r["errors"], r["hints"], r["seconds"]
            )
            for r in rows
        ]

    def passages_done(self) -> set[str]:
        return {r[0] for r in self._query("SELECT passage FROM passage")}

    # -- where the learner is ------------------------------------------------------------------

    def get_state(self, key: str, default: str | None = None) -> str | None:
        rows = self._query("SELECT value FROM state WHERE key = ?", (key,))
        return rows[0][0] if rows else default

    def set_state(self, key: str, value: str) -> None:
        self._write(
            "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

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
        if step:
            self.set_state(f"position.{chapter}", step)

    def chapter_position(self, chapter: int) -> str | None:
        """The step the learner was last at in `chapter` (where `tutor start chapter N` and
        the chapter picker open it), if they have been there."""
        step = self.get_state(f"position.{chapter}")
        if step:
            return step
        last = self.last_position()  # a home from before positions were kept per chapter
        return last[1] if last and last[0] == chapter else None

    def last_activity(self, exercises: list[str]) -> float | None:
        if not exercises:
            return None
        marks = ",".join("?" * len(exercises))
        rows = self._query(f"SELECT MAX(updated_at) FROM exercise WHERE exercise IN ({marks})", exercises)
        return rows[0][0] if rows else None


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on error (the connection is in autocommit mode)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _salvage(damaged: Path, fresh: sqlite3.Connection) -> dict[str, int]:
    """Copy every readable row of `damaged` into `fresh`; how many rows of what were kept.

    A damaged header is replaced by a clean one first (a copy of the file, never the file);
    a damaged page ends a table scan, so each table is read by rowid, skipping what fails."""
    counts = {"passes": 0, "exercises": 0, "runs": 0, "typing records": 0, "other rows": 0}
    src = _openable(damaged)
    if src is None:
        return counts
    try:
        for table in _TABLES:
            columns = [r[1] for r in fresh.execute(f"PRAGMA table_info({table})").fetchall()]
            for row in _rows(src, table):
                values = {k: row[k] for k in row.keys() if k in columns}
                if not values:
                    continue
                names = ", ".join(values)
                marks = ", ".join("?" * len(values))
                try:
                    fresh.execute(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", tuple(values.values()))
                except sqlite3.Error:
                    continue
                if table == "exercise":
                    counts["passes" if values.get("status") == Status.PASSED else "exercises"] += 1
                elif table == "run":
                    counts["runs"] += 1
                elif table == "typing":
                    counts["typing records"] += 1
                else:
                    counts["other rows"] += 1
    finally:
        src.close()
    return counts


def _openable(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to `path`, or to a copy with a rebuilt header when its own is gone."""

    def connect(p: Path) -> sqlite3.Connection | None:
        try:
            db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            db.row_factory = sqlite3.Row
            db.execute("SELECT name FROM sqlite_master").fetchall()
            return db
        except sqlite3.Error:
            return None

    db = connect(path)
    if db is not None:
        return db
    try:
        data = bytearray(path.read_bytes())
    except OSError:
        return None
    if len(data) < 8192:
        return None
    header = _clean_header(len(data))
    data[:100] = header
    copy = path.with_name(path.name + ".header-fixed")
    try:
        copy.write_bytes(bytes(data))
    except OSError:
        return None
    return connect(copy)


def _clean_header(size: int, page_size: int = 4096) -> bytes:
    """The 100-byte header of a rollback-journal database of `size` bytes with our schema."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "h.sqlite3"
        db = sqlite3.connect(p)
        db.execute(f"PRAGMA page_size = {page_size}")
        db.execute("CREATE TABLE x (y)")
        db.commit()
        db.close()
        header = bytearray(p.read_bytes()[:100])
    header[28:32] = (size // page_size).to_bytes(4, "big")  # database size in pages
    header[18] = header[19] = 1  # legacy read/write versions: no WAL needed to read
    return bytes(header)


def _rows(db: sqlite3.Connection, table: str) -> list[sqlite3.Row]:
    try:
        return db.execute(f"SELECT * FROM {table}").fetchall()
    except sqlite3.Error:
        pass
    rows: list[sqlite3.Row] = []
    last = 0
    misses = 0
    while misses < 2000:
        try:
            row = db.execute(
                f"SELECT rowid AS _rowid_, * FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1", (last,)
            ).fetchone()
        except sqlite3.Error:
            last += 1
            misses += 1
            continue
        if row is None:
            break
        last = row["_rowid_"]
        rows.append(row)
    return rows
