"""tutor's own messages in Chinese: choosing the language, a complete catalogue, and a verdict
whose reasons arrive in the learner's language through the real runner."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from tutor import i18n

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


@pytest.mark.parametrize(
    "flag,env,remembered,expected",
    [
        ("zh", {"TUTOR_LANG": "en", "LANG": "en_US.UTF-8"}, "en", "zh"),  # the flag wins
        (None, {"TUTOR_LANG": "zh"}, "en", "zh"),  # then TUTOR_LANG
        (None, {"LANG": "en_US.UTF-8"}, "zh", "zh"),  # then the app's choice
        (None, {"LANG": "zh_CN.UTF-8"}, None, "zh"),  # then the locale
        (None, {"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US"}, None, "zh"),
        (None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, None, "en"),  # LC_ALL=C means C
        (None, {"LANG": "fr_FR.UTF-8"}, None, "en"),  # unsupported: English
        (None, {}, None, "en"),
        (None, {"TUTOR_LANG": "klingon"}, None, "en"),
    ],
)
def test_language_precedence(flag, env, remembered, expected):
    assert i18n.resolve(flag, env=env, remembered=remembered) == expected


def _fields(text: str) -> list[str]:
    return sorted(f for _, f, spec, _ in string.Formatter().parse(text) if f is not None)


def test_every_message_has_a_chinese_translation_with_the_same_placeholders():
    from babel.messages.extract import extract_from_dir
    from babel.messages.pofile import read_po

    ids = {
        msg
        for _, _, msg, _, _ in extract_from_dir(
            str(ROOT / "tutor"), method_map=[("**.py", "python")], keywords={"_": None, "N_": None}
        )
    }
    with open(ROOT / "tutor" / "locale" / "zh" / "LC_MESSAGES" / "tutor.po", "rb") as f:
        catalog = {m.id: m.string for m in read_po(f) if m.id}
    missing = sorted(m for m in ids if not catalog.get(m))
    assert not missing, f"run pybabel extract/update and translate: {missing[:5]}"
    for msgid in ids:
        assert _fields(msgid) == _fields(catalog[msgid]), msgid
        # Translated, not copied (a few are only names and punctuation, like "rank {rank}: ").
        assert catalog[msgid] != msgid, msgid


def test_messages_switch_language_live():
    from tutor.runner.judge import judge
    import torch

    i18n.set_language("zh")
    failure = judge("close", "output", torch.zeros(2, 3), torch.zeros(2, 4), {})
    assert failure is not None and failure[0] == "output：形状 (2, 3) 与期望的 (2, 4) 不同"
    i18n.set_language("en")
    assert (
        judge("close", "output", torch.zeros(2, 3), torch.zeros(2, 4), {})[0]
        == "output: shape (2, 3) != expected (2, 4)"
    )


@pytest.mark.slow
def test_a_verdict_comes_back_in_chinese(runner, tmp_path):
    from tutor.runner.protocol import RunRequest

    fix = ROOT / "tests" / "runner_fixtures"
    path = tmp_path / "learner.py"
    path.write_text("def double(x):\n    return x * 3\n")
    i18n.set_language("zh")
    req = RunRequest(
        exercise="t",
        code=str(path),
        solution=str(fix / "double_solution.py"),
        checker=str(fix / "double_check.py"),
        timeout=30,
        seed=1,
        lang=i18n.language(),
    )
    v = runner.run(req)
    assert v.status == "failed" and v.reason.startswith("output：最大绝对误差"), v.reason


def test_no_function_binds_the_name_it_translates_with():
    """`line, _, rest = ...` inside a function that also calls `_()` makes `_` a local there:
    the translation call then calls a string (found twice in the runner; this keeps it gone)."""
    import ast

    bad = []
    for path in (ROOT / "tutor").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            scopes = [
                n for n in ast.walk(fn) if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
            ]
            in_comprehension = {id(t) for c in scopes for g in c.generators for t in ast.walk(g.target)}
            binds = any(
                isinstance(n, ast.Name)
                and n.id == "_"
                and isinstance(n.ctx, ast.Store)
                and id(n) not in in_comprehension
                for n in ast.walk(fn)
            )
            calls = any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_" for n in ast.walk(fn)
            )
            if binds and calls:
                bad.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}")
    assert not bad, bad


def test_a_path_mismatch_is_reported_in_words(runner, tmp_path):
    """The judge's 'different path' reason is built with `_()` (it once crashed there)."""
    from tutor.runner.protocol import RunRequest

    fix = ROOT / "tests" / "runner_fixtures"
    path = tmp_path / "learner.py"
    path.write_text(
        "import gc\nfrom tutor.runner import checker_api as checking\n"
        "def double(x):\n"
        "    for o in gc.get_objects():\n"
        "        if isinstance(o, checking.Context):\n"
        "            o.channel.expect('equal', 'something else', 1, None, {})\n"
        "    return x * 2\n"
    )
    v = runner.run(
        RunRequest(
            exercise="t",
            code=str(path),
            solution=str(fix / "double_solution.py"),
            checker=str(fix / "double_check.py"),
            timeout=30,
            seed=1,
        )
    )
    assert v.status == "failed" and "different path" in v.reason, v
