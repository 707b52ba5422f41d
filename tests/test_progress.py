"""The progress database: persistence across processes, concurrent writers, corruption."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from tutor.progress import DB_NAME, MIGRATIONS, Progress, TypingRecord


def test_progress_survives_reopen(tmp_path):
    p = Progress(tmp_path)
    p.record_run("sigmoid", "failed", "output differs", {"time": {"speedup": 1.0}})
    p.record_run("sigmoid", "passed")
    assert p.use_hint("relu", 4) == 1
    assert p.use_hint("relu", 4) == 2
    p.set_position(3, "relu")
    p.close()
    q = Progress(tmp_path)
    assert q.exercise("sigmoid").status == "passed"
    assert q.exercise("relu").hints_used == 2
    assert q.exercise("never").status == "new"
    assert q.last_position() == (3, "relu")
    runs = q.runs("sigmoid")
    assert [r.status for r in runs] == ["passed", "failed"]
    assert runs[1].figures == {"time": {"speedup": 1.0}}
    assert q.schema_version == len(MIGRATIONS)


def test_hints_stop_at_the_number_available(tmp_path):
    p = Progress(tmp_path)
    for _ in range(6):
        n = p.use_hint("x", 3)
    assert n == 3


def test_a_failing_run_does_not_undo_a_pass(tmp_path):
    p = Progress(tmp_path)
    p.record_run("x", "passed")
    p.record_run("x", "failed", "oops")
    assert p.exercise("x").status == "passed"


def test_solution_runs_do_not_count_as_learner_progress(tmp_path):
    p = Progress(tmp_path)
    p.record_run("x", "passed", role="solution")
    assert p.exercise("x").status == "new"


def test_typing_records(tmp_path):
    p = Progress(tmp_path)
    rec = TypingRecord("02/first", time.time(), 40.0, 45.0, 0.95, 2, 1, 30.0)
    p.record_typing(rec)
    assert p.typing_history("02/first") == [rec]
    assert p.passages_done() == {"02/first"}


def test_writes_from_another_process_are_seen_and_concurrent_writers_are_safe(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from tutor.progress import Progress
        p = Progress(Path({str(tmp_path)!r}))
        for i in range(50):
            p.record_run("ex" + sys.argv[1], "failed", str(i))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(3)]
    mine = Progress(tmp_path)
    for i in range(50):
        mine.record_run("mine", "failed", str(i))
    assert all(p.wait(60) == 0 for p in procs)
    for n in range(3):
        assert len(mine.runs(f"ex{n}", limit=100)) == 50
    assert len(mine.runs("mine", limit=100)) == 50


def test_corrupt_database_is_moved_aside_and_workspace_untouched(tmp_path):
    code = tmp_path / "workspace" / "02-custom-autograd" / "sigmoid.py"
    code.parent.mkdir(parents=True)
    code.write_text("my precious work")
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite" * 1000)
    p = Progress(tmp_path)
    assert p.notice and "moved to" in p.notice
    p.record_run("x", "passed")
    assert p.exercise("x").status == "passed"
    assert list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))
    assert code.read_text() == "my precious work"


def test_corrupt_database_via_cli_is_one_line(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"\0garbage" * 500)
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "--workspace", str(tmp_path), "list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "progress database was damaged" in done.stderr
    assert "Traceback" not in done.stderr


def test_processes_creating_the_database_at_once_never_move_it_aside(tmp_path):
    # The app and `tutor check` can open a brand-new home together: a busy or half-created
    # file must be waited for, never mistaken for damage (that would lose progress).
    for trial in range(4):
        home = tmp_path / f"home{trial}"
        script = textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from tutor.progress import Progress
            p = Progress(Path({str(home)!r}))
            for i in range(20):
                p.record_run("ex" + sys.argv[1], "failed", str(i))
        """)
        procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(6)]
        assert all(p.wait(60) == 0 for p in procs)
        assert not list(home.glob("*corrupt*"))
        mine = Progress(home)
        assert [len(mine.runs(f"ex{n}", limit=100)) for n in range(6)] == [20] * 6


# -- damage and salvage (issue 11) -----------------------------------------------------------


def _filled(home):
    import time as _t

    from tutor.progress import Progress, TypingRecord

    p = Progress(home)
    for i in range(300):  # enough rows for several pages
        p.record_run(f"ex{i % 7}", "failed", "x" * 200, {"time": {"learner_s": 0.1}})
    p.record_run("sigmoid", "passed")
    p.use_hint("leaky-relu", 3)
    p.record_typing(TypingRecord("02/anatomy", _t.time(), 40.0, 45.0, 0.97, 2, 0, 30.0))
    p.set_position(4, "checkpoint-stack")
    p._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    p.close()
    return home / "progress.sqlite3"


def test_garbage_over_a_middle_page_is_recovered_at_the_next_write(tmp_path):
    from tutor.progress import Progress

    db = _filled(tmp_path)
    seen: list[str] = []
    p = Progress(tmp_path, on_notice=seen.append)
    size = db.stat().st_size
    with open(db, "r+b") as f:  # the middle of the file: run rows
        f.seek((size // 4096 // 2) * 4096)
        f.write(b"\xde\xad\xbe\xef" * 1024)
    # The app's connection has most pages cached; a connection that must read the page again
    # is what the app meets later (its cache is small next to a real history).
    import sqlite3

    p._db.close()
    p._db = sqlite3.connect(db, isolation_level=None)
    p._db.row_factory = sqlite3.Row
    p.runs(limit=1000)  # reads the damaged page: must not raise
    p.record_run("sigmoid", "failed", "after the damage")
    assert seen and "damaged" in seen[0] and p.notice == seen[0]
    assert p.exercise("sigmoid").status == "passed"  # the pass was salvaged (with its seal)
    assert p.exercise("leaky-relu").hints_used == 1
    assert p.last_position() == (4, "checkpoint-stack")
    assert len(p.typing_history()) == 1
    assert len(p.runs(limit=1000)) > 100  # most run rows came back
    assert list(tmp_path.glob("progress.sqlite3.corrupt-*"))


def test_garbage_over_the_header_is_salvaged_on_open(tmp_path):
    from tutor.progress import Progress

    db = _filled(tmp_path)
    with open(db, "r+b") as f:
        f.write(b"garbage!" * 12)  # 96 bytes over the 100-byte header
    seen: list[str] = []
    p = Progress(tmp_path, on_notice=seen.append)
    assert seen and "damaged" in seen[0]
    assert p.exercise("sigmoid").status == "passed"
    assert p.last_position() == (4, "checkpoint-stack")


def test_a_pass_inserted_without_a_seal_does_not_count(tmp_path):
    import sqlite3
    import time as _t

    from tutor.progress import Progress

    p = Progress(tmp_path)
    raw = sqlite3.connect(tmp_path / "progress.sqlite3")
    raw.execute(
        "INSERT INTO exercise (exercise, status, hints_used, updated_at, passed_at) "
        "VALUES ('sigmoid', 'passed', 0, ?, ?)",
        (_t.time(), _t.time()),
    )
    raw.commit()
    assert p.exercise("sigmoid").status == "started"
    assert p.all_exercises()["sigmoid"].status == "started"
    p.record_run("sigmoid", "passed")
    assert Progress(tmp_path).exercise("sigmoid").status == "passed"


def test_passes_from_before_seals_existed_still_count(tmp_path):
    import sqlite3

    from tutor.progress import MIGRATIONS, Progress

    raw = sqlite3.connect(tmp_path / "progress.sqlite3")
    raw.executescript(MIGRATIONS[0])
    raw.execute(
        "INSERT INTO exercise (exercise, status, hints_used, updated_at, passed_at) "
        "VALUES ('sigmoid', 'passed', 0, 1.0, 1.0)"
    )
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    assert Progress(tmp_path).exercise("sigmoid").status == "passed"
