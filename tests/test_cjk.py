"""Chinese line breaking (tutor/cjk.py), shared by the app and the CLI: between characters,
never before closing punctuation, no character alone on a paragraph's last line, a long path
cut after a separator, and no "…" from a trailing space past the edge."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from tutor import cjk

CLOSING = tuple("，。、：；！？）》」”…")


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import rich.text

    monkeypatch.setattr(rich.text, "divide_line", cjk.divide_line)


def wrap(text: str, width: int, overflow: str = "fold") -> list[str]:
    return [line.plain for line in Text(text).wrap(Console(width=200), width, overflow=overflow)]  # type: ignore[arg-type]


PARAGRAPHS = [
    "在 `exercises/grad_accumulation.py` 中编写 accumulated_step(model, optimizer, loss_fn, inputs, targets)：在批次",
    "用 ctx 写 forward/backward，gradcheck 与 gradgradcheck，数值稳定的公式，二阶反向，以及能被 torch.func vmap 的 Function。",
    "一个训练步会让四类张量同时存活，每一类都有各自的对策。弄清哪一类占大头，就知道该用哪种技术了。",
]


@pytest.mark.parametrize("text", PARAGRAPHS)
@pytest.mark.parametrize("width", [12, 20, 29, 30, 40, 57])
def test_lines_fit_keep_every_character_and_never_start_with_closing_punctuation(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(cell_len(line.rstrip()) <= width for line in lines)
    assert not any(line.startswith(CLOSING) for line in lines)


@pytest.mark.parametrize("width", range(20, 60))
def test_a_space_at_the_edge_after_wide_text_does_not_become_an_ellipsis(width: int) -> None:
    text = PARAGRAPHS[1]
    assert not any("…" in line for line in wrap(text, width, overflow="ellipsis"))


def test_no_character_stands_alone_on_the_last_line() -> None:
    text = "一二三四五六七八九十" * 2 + "在。"
    assert wrap(text, 40) == ["一二三四五六七八九十一二三四五六七八九", "十在。"]
    assert wrap("abc def 在", 6) == ["abc ", "def 在"]
    assert wrap("在", 40) == ["在"]


def test_a_long_path_is_cut_after_its_directory_and_fills_the_line_first() -> None:
    lines = wrap("在 exercises/grad_accumulation.py 中编写", 20)
    assert lines == ["在 exercises/", "grad_accumulation.py", "中编写"]  # not 在 alone, not .p / y
    assert wrap("见 exercises/grad_accumulation.py", 12) == ["见 ", "exercises/", "grad_", "accumulation", ".py"]


def test_english_takes_richs_own_path() -> None:
    english = "Plain English text keeps wrapping at the spaces between its words"
    assert cjk.divide_line(english, 30) == cjk._rich_divide_line(english, 30) != []
