"""The `tutor` command in Chinese: `--lang`, TUTOR_LANG and the language remembered from the
app choose what `tutor list`, `--help` and the one-line errors say (real subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def tutor(*args: str, home: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("TUTOR_LANG", "LC_ALL", "LC_MESSAGES", "LANG")}
    full.update(env or {}, TUTOR_HOME=str(home), COLUMNS="120")
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, env=full, timeout=120)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_list_speaks_chinese_with_the_flag_and_english_without(home: Path) -> None:
    zh = tutor("--lang", "zh", "list", home=home)
    assert zh.returncode == 0, zh.stderr
    assert "各章" in zh.stdout and "最近学习" in zh.stdout
    assert "自定义 autograd Function" in zh.stdout  # chapter titles from i18n/zh.toml
    en = tutor("list", home=home)
    assert "chapters" in en.stdout and "last activity" in en.stdout and "各章" not in en.stdout


def test_env_and_locale_choose_chinese_and_errors_stay_one_line(home: Path) -> None:
    done = tutor("start", "chapter", "99", home=home, env={"TUTOR_LANG": "zh"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "没有第 99 章" in done.stderr and "Traceback" not in done.stderr
    help_ = tutor("--help", home=home, env={"LANG": "zh_CN.UTF-8"})
    assert "在终端里动手学习 PyTorch 进阶技术" in help_.stdout


def test_the_language_chosen_in_the_app_is_remembered(home: Path) -> None:
    from tutor.progress import Progress

    progress = Progress(home)
    progress.set_state("lang", "zh")  # what F12 in the app stores
    progress.close()
    assert "各章" in tutor("list", home=home).stdout
    assert "chapters" in tutor("--lang", "en", "list", home=home).stdout  # the flag still wins
