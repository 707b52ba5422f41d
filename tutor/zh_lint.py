"""The Chinese texts' own rules, run by `tutor dev check` over every zh guide page, every
`i18n/zh.toml` and tutor's `tutor.po`: one term per idea, and CJK typesetting.

Terms: `TERMS` is the one list of rejected variants, each with the term docs/GLOSSARY.zh.md
settles on (the glossary's table "Terms `tutor dev check` enforces" shows the same list).
A pattern matches only the mistaken use: 激活 as a verb, or 降级 for a version downgrade,
pass. Layout (guide pages only, as Markdown renders them): a line break inside a paragraph
shows as a space between two Chinese characters; a space after full-width punctuation
(`**要点。** 正文`) too; and brackets inside brackets (（…（gloss）…）) read badly, in every
zh text. UI quotes: a zh page or hint that quotes (in backticks or quotation marks) an English
string of the app or a checker whose Chinese differs quotes what a zh learner never sees. Plain
Python, no torch: each check takes a file's text and returns (line, message).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token


@dataclass(frozen=True)
class Term:
    rejected: re.Pattern[str]
    use: str  # the glossary's term
    english: str


TERMS: tuple[Term, ...] = (
    # 降级 for a version downgrade (版本降级, 降级到 2.4) is fine.
    Term(re.compile(r"(?<!版本)降级(?![^，。；：\n]*(?:版本|旧版|\d+\.\d+))"), "下沉", "lowering / lower"),
    # Outside code (`use_reentrant`) and glosses (可重入（reentrant）).
    Term(re.compile(r"(?<![\w-])(?:non-)?reentrant(?![\w-]|\s*[）)])"), "可重入 / 非可重入", "reentrant"),
    Term(re.compile(r"不可重入"), "非可重入", "non-reentrant"),
    Term(re.compile(r"分派"), "分发 / 分发器", "dispatch / dispatcher"),
    Term(re.compile(r"墙钟|墙上时钟"), "挂钟时间", "wall-clock time"),
    # The glossary keeps `kernel` in English; an operating system's kernel is 内核.
    Term(re.compile(r"(?<!Linux )(?<!Linux)(?<!操作系统)(?<!系统)内核"), "kernel", "kernel"),
    # 激活 alone for the tensors; the verb (激活虚拟环境, 被激活) and the compounds pass.
    Term(
        re.compile(r"(?<![被已未])激活(?!值|检查点|函数|虚拟环境|环境|码|了|它|这|该|一下|\s*`)"),
        "激活值",
        "activations",
    ),
    Term(re.compile(r"黑塞矩阵\s*[-–—]?\s*向量(?:乘)?积"), "黑塞-向量积", "Hessian-vector product"),
    Term(re.compile(r"海森"), "黑塞矩阵", "Hessian"),
    Term(re.compile(r"Adam[^。；\n]{0,40}动量缓冲"), "矩估计", "Adam's moments (m, v)"),
)

_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_FULL_WIDTH = "\u3000-\u303f\uff00-\uffef\u2014\u2026\u2018\u2019\u201c\u201d"
_CJK = re.compile(f"[{_IDEOGRAPH}{_FULL_WIDTH}]")
_HAN = re.compile(f"[{_IDEOGRAPH}]")
_FULL_WIDTH_MARK = re.compile(f"[{_FULL_WIDTH}]")
_SPACE_AFTER = re.compile(r"([。！？：；，、）]) +(?=\S)")
_INLINE_CODE = re.compile(r"(`+)(?:.+?)\1")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PARSER = MarkdownIt("gfm-like").disable("text_join")  # the one `emphasis_problems` uses


def _term_problems(line: int, text: str) -> Iterator[tuple[int, str]]:
    for term in TERMS:
        for m in term.rejected.finditer(text):
            yield line, f"{m.group(0)!r} is not the glossary's term for {term.english}: write {term.use}"


def _nesting(line: int, text: str) -> Iterator[tuple[int, str]]:
    """A full-width bracket opened while another bracket is open: （…（gloss）…） or f(…（…）)."""
    depth = 0
    for i, c in enumerate(text):
        if c in "（(":
            if c == "（" and depth:
                yield (
                    line,
                    (
                        f"brackets inside brackets near {text[max(0, i - 12) : i + 12]!r}: rewrite so they "
                        "do not nest (a dash or a colon for the aside, or the gloss moved out)"
                    ),
                )
                return
            depth += 1
        elif c in "）)" and depth:
            depth -= 1


def _markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code, inline code blanked (code keeps its English)."""
    fence = ""
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        yield n, _INLINE_CODE.sub("`C`", line)


def toml_strings(text: str) -> Iterator[tuple[int, str]]:
    """The Chinese strings of an i18n/zh.toml, by line: values with a CJK character (the
    `[reasons]` keys are the English templates)."""
    for n, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in _STRING.finditer(line):
            if _CJK.search(m.group(1)):
                yield n, m.group(1)


def po_strings(text: str) -> Iterator[tuple[int, str]]:
    """The msgstr lines of a .po catalogue (continuation lines included), by line."""
    inside = False
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("msgstr"):
            inside = True
        elif not line.startswith('"'):
            inside = False
        if inside:
            for m in _STRING.finditer(line):
                yield n, m.group(1)


_QUOTED = re.compile(r"`([^`\n]+)`|“([^”\n]+)”|\"([^\"\n]+)\"")


def _english_ui(quoted: str, english: Mapping[str, str]) -> str | None:
    """The zh words the app shows for `quoted`, when it is one of the app's or the checker's
    English strings (the same but for a trailing ellipsis) with different Chinese. A name the
    Chinese keeps (`torch.library.opcheck` in 用 torch.library.opcheck 检查) is code, not UI."""
    for key in (quoted, quoted + "…", quoted.removesuffix("…")):
        shown = english.get(key)
        if shown and key.removesuffix("…") not in shown:
            return shown
    return None


def _quote_problems(line: int, text: str, english: Mapping[str, str]) -> Iterator[tuple[int, str]]:
    for m in _QUOTED.finditer(text):
        quoted = next(g for g in m.groups() if g is not None).strip()
        shown = _english_ui(quoted, english) if not _HAN.search(quoted) else None
        if shown is not None:
            yield line, f"quotes the English UI string {quoted!r}: the zh app shows {shown!r}"


def ui_quote_problems(text: str, english: Mapping[str, str]) -> list[tuple[int, str]]:
    """A zh guide page's quotes of English UI strings (outside fenced code): `english` maps
    each English string of tutor's catalogue and the chapter's checker to its zh text."""
    found: list[tuple[int, str]] = []
    fence = ""
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        found += _quote_problems(n, line, english)
    return sorted(set(found))


def strings_quote_problems(strings: Iterator[tuple[int, str]], english: Mapping[str, str]) -> list[tuple[int, str]]:
    """The same for catalogue strings (the zh hints of an i18n/zh.toml)."""
    found: list[tuple[int, str]] = []
    for n, s in strings:
        found += _quote_problems(n, s, english)
    return sorted(set(found))


_TODO = re.compile(r"\s*(?:#|//)\s*TODO(?:\s+\d+)?\b:?\s*(.*)")
_COMMENT = re.compile(r"\s*(?:#|//)\s?(.*)")

TASK_MARKER = "**起始代码中的 TODO**"
_TASK_ITEM = re.compile(r"TODO (\d+)(?:（`[^`]+`）)?：\S")


def todo_comments(source: str) -> list[str]:
    """The TODO comments of an exercise's stub, in order (a `# TODO` or `// TODO` line and the
    comment lines that continue it), each as one line of text."""
    found: list[list[str]] = []
    current: list[str] | None = None
    for line in source.splitlines():
        todo = _TODO.match(line)
        if todo:
            current = [todo.group(1)]
            found.append(current)
            continue
        more = _COMMENT.match(line) if current is not None else None
        if more and current is not None:
            current.append(more.group(1).strip())
        else:
            current = None
    return [" ".join(t).strip() for t in found]


def task_problems(page: str, stub: str) -> list[str]:
    """A zh exercise page's TODO block against its stub: the block (after TASK_MARKER) must hold
    one paragraph `TODO n（`fn`）：…` per TODO comment of the stub, numbered in order, so a
    Chinese reader has every instruction the English file gives (and the count stays in step
    when the stub changes)."""
    todos = todo_comments(stub)
    if not todos:
        return []
    if TASK_MARKER not in page:
        return [f"no {TASK_MARKER} block: the stub has {len(todos)} TODO comment(s) in English; translate each"]
    block = page.split(TASK_MARKER, 1)[1]
    numbers = [int(m.group(1)) for m in (_TASK_ITEM.match(p) for p in block.split("\n\n")[1:]) if m]
    if numbers != list(range(1, len(todos) + 1)):
        return [
            f"the {TASK_MARKER} block has the paragraphs TODO {numbers or 'none'}, the stub {len(todos)} TODO "
            f"comment(s): one paragraph per TODO, numbered 1-{len(todos)} in order"
        ]
    return []


def _visible(children: list[Token]) -> Iterator[Token]:
    for t in children:
        if t.type in ("code_inline", "softbreak", "hardbreak") or (t.type == "text" and t.content):
            yield t


def _layout_problems(text: str) -> Iterator[tuple[int, str]]:
    """Line breaks and spaces that Markdown shows as stray spaces in Chinese text."""
    for block in _PARSER.parse(text):
        if block.type != "inline" or not block.children or not block.map:
            continue
        line = block.map[0] + 1
        seen = ""  # the paragraph's visible text, code as "C", a soft break as "\n"
        parts = list(_visible(block.children))
        for i, t in enumerate(parts):
            if t.type == "softbreak":
                before = seen[-1:]
                after = next((p.content[:1] if p.type == "text" else "C" for p in parts[i + 1 :]), "")
                if _CJK.match(before) or _FULL_WIDTH_MARK.match(after):
                    yield (
                        line,
                        (
                            f"a line break inside a Chinese paragraph shows as a space: join line {line + 1} "
                            "onto this one"
                        ),
                    )
                line += 1
                seen += "\n"
            elif t.type == "hardbreak":
                line += 1
                seen += "\n"
            else:
                seen += t.content if t.type == "text" else "C"
        first = block.map[0] + 1
        for m in _SPACE_AFTER.finditer(seen):
            at = first + seen.count("\n", 0, m.start())
            yield (
                at,
                (
                    f"a space after {m.group(1)!r} shows in the text: remove it (a bold lead-in ends before "
                    "its punctuation: **要点**。正文)"
                ),
            )


def markdown_problems(text: str) -> list[tuple[int, str]]:
    """A zh guide page's term, nesting and layout problems, as (line, message)."""
    found = []
    for n, line in _markdown_lines(text):
        found += [*_term_problems(n, line), *_nesting(n, line)]
    found += _layout_problems(text)
    return sorted(set(found))


def strings_problems(strings: Iterator[tuple[int, str]]) -> list[tuple[int, str]]:
    """Term and nesting problems of catalogue strings (an i18n/zh.toml's, a .po's msgstr)."""
    found = []
    for n, s in strings:
        found += [*_term_problems(n, s), *_nesting(n, s)]
    return sorted(set(found))
