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
    full.update({"COLUMNS": "120", **(env or {})}, TUTOR_HOME=str(home))
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


_CLOSING = tuple("，。、：；！？）》」”…")


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines() if line.strip()]


def test_tutor_hint_shows_the_targeted_hint_of_the_last_failing_check_in_both_languages(home: Path) -> None:
    """A check that failed with a reason a [[steps.mistakes]] entry knows: `tutor hint` gives
    that mistake's hint first (as Tab in the app), then the ladder moves on; zh at 80 columns
    wraps by the app's rules, with no space after the full-width colon."""
    from rich.cells import cell_len

    from tutor.course import load_course
    from tutor.progress import Progress

    en = load_course().exercise("func-vmap-linear")
    zh = load_course(lang="zh").exercise("func-vmap-linear")
    reason = f"batched_linear output: {en.mistakes[0].when} against the loop over layers"
    Progress(home).record_run(en.id, "failed", reason)  # the check ran in English

    first = tutor("--lang", "zh", "hint", en.id, home=home, env={"COLUMNS": "80"})
    assert first.returncode == 0, first.stderr
    out = first.stdout.replace("\n", "")
    assert "针对上次检查发现的错误：" in out and zh.mistakes[0].hint.replace(" ", "") in out.replace(" ", "")
    assert "提示 1/" not in out and Progress(home).exercise(en.id).hints_used == 0  # the ladder waits
    lines = _lines(first.stdout)
    assert all(cell_len(line) <= 80 for line in lines) and max(map(cell_len, lines)) > 70
    assert not any(line.startswith(_CLOSING) for line in lines)

    second = tutor("--lang", "zh", "hint", en.id, home=home, env={"COLUMNS": "80"})
    assert f"提示 1/{len(zh.hints)}：{zh.hints[0][:6]}" in second.stdout  # no space after ：
    assert "提示 2/" not in second.stdout and "针对上次检查发现的错误" in second.stdout  # kept, dim

    Progress(home).record_run(en.id, "failed", "batched_linear output differs from the loop")
    other = tutor("hint", en.id, home=home, env={"COLUMNS": "80"})
    assert "hint 2/" in other.stdout and "For the mistake your last check found" not in other.stdout
    Progress(home).record_run(en.id, "failed", reason)
    again = tutor("hint", en.id, home=home)
    assert "For the mistake your last check found:" in again.stdout and en.mistakes[0].hint[:40] in again.stdout
    assert "hint 3/" not in again.stdout  # a new failing run: its targeted hint is the new one


def test_the_cli_wraps_a_zh_reason_at_80_columns_by_the_apps_rules(home: Path) -> None:
    """`tutor check`'s table (and every CLI print) breaks Chinese between characters, never
    before closing punctuation, and leaves no character alone on a last line."""
    import io

    import rich.text
    from rich.console import Console

    from tutor import cjk, cli, i18n
    from tutor.cli import check as headless
    from tutor.course import load_course
    from tutor.runner.protocol import Verdict

    before = rich.text.divide_line
    try:
        assert cli.main(["--workspace", str(home), "--lang", "zh", "list"]) == 0
        assert rich.text.divide_line is cjk.divide_line  # installed by the CLI, no Textual needed
        ex = load_course(lang="zh").exercise("func-vmap-linear")
        reason = (
            "batched_linear 的输出与遍历各层的循环不一致：第 3 层的第 0 行（共 16 行）差了 0.25，"
            "说明映射出来的那一维放错了位置。请检查 out_dims，并确认 x 的 in_dims 为 None。在"
        )
        verdict = Verdict(status="failed", reason=reason)
        out = io.StringIO()
        headless.print_table([headless.CheckResult(ex, "learner", verdict)], Console(file=out, width=80))
        cells = [row.split("│")[3].strip() for row in out.getvalue().splitlines() if row.count("│") > 3]
        lines = [c for c in cells if c]
        assert "".join(lines).replace(" ", "") == reason.replace(" ", "")  # nothing lost (spaces at a break go)
        assert not any(line.startswith(_CLOSING) for line in lines)
        assert len(lines[-1]) > 1  # the 在 at the end does not stand alone
    finally:
        rich.text.divide_line = before
        i18n.set_language("en")
