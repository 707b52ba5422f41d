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
    done = subprocess.run([sys.executable, "-m", "tutor", "--workspace", str(tmp_path), "list"],
                          capture_output=True, text=True, timeout=60)
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
