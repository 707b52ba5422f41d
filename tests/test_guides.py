"""Every guide code block parses; every block fenced ```python run executes as shown."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.course import code_blocks, load_course

ROOT = Path(__file__).resolve().parents[1]


def _blocks():
    course = load_course(ROOT / "lessons", ROOT / "solutions")
    for chapter in course.chapters:
        for step in chapter.steps:
            # English only: `tutor dev check` keeps every translation's code byte-identical,
            # so running the copies again would only double the time.
            path = step.texts["en"]
            for i, block in enumerate(code_blocks(path.read_text(encoding="utf-8"))):
                if block.language == "python":
                    yield pytest.param(block, id=f"{chapter.slug}/{path.name}#{i}")


ALL = list(_blocks())
RUNNABLE = [p for p in ALL if p.values[0].runnable]


@pytest.mark.parametrize("block", ALL)
def test_block_parses(block):
    ast.parse(block.code)


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE)
def test_runnable_block_runs(block, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="2")
    # From a file, as a learner would run it: torch.jit.script needs the source of classes.
    script = tmp_path / "passage.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_chapter_has_runnable_passages():
    course = load_course(ROOT / "lessons", ROOT / "solutions")
    for chapter in course.chapters:
        assert chapter.passages, f"{chapter.slug} has no type-along passage"
        for passage in chapter.passages:
            assert passage.code().strip(), passage.key
