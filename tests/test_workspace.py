"""The learner's files: created from stubs once, never overwritten, reset with a backup."""

from tutor.workspace import Workspace, atomic_write


def test_workspace_is_created_from_stubs_and_never_overwritten(home, course):
    ws = Workspace(home)
    created = ws.ensure(course)
    assert len(created) == len(course.exercises)
    ex = course.exercise("sigmoid")
    assert ws.read(ex) == ex.stub.read_text()
    ws.write(ex, "my work")
    assert ws.ensure(course) == []
    assert ws.read(ex) == "my work"


def test_reset_restores_stub_and_keeps_timestamped_backup(home, course):
    ws = Workspace(home)
    ex = course.exercise("sigmoid")
    ws.write(ex, "attempt 1")
    b1 = ws.reset(ex)
    assert ws.read(ex) == ex.stub.read_text()
    assert b1 is not None and b1.read_text() == "attempt 1"
    ws.write(ex, "attempt 2")
    b2 = ws.reset(ex)
    assert b2 != b1 and b2.read_text() == "attempt 2" and b1.read_text() == "attempt 1"
    assert ws.reset(ex) is None  # nothing changed: nothing to back up


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a" / "f.py"
    atomic_write(target, "one")
    atomic_write(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["f.py"]
