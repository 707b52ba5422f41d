"""The course's own rules, which `tutor dev check` (tutor/cli/dev.py) enforces, modelled on
rustlings' `dev check`.

Every manifest loads; every guide code block parses; every translated guide has the English
guide's python blocks unchanged (steps not yet translated, or translated from an older English
text, are listed as warnings); every stub has TODO markers and none of
the lines its solution marks `# key`; every exercise's stub FAILS its check and its solution PASSES. Exercises this machine cannot run
(CUDA, several GPUs) are reported as skipped, never counted as passed.
"""

from __future__ import annotations

import ast
import io
import re
import tomllib
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from tutor.status import Status
from tutor import i18n, reason_lint, zh_lint
from tutor.course import (
    DEFAULT_LANGUAGE,
    Course,
    Exercise,
    LessonError,
    available_languages,
    code_blocks,
    load_course,
    reason_catalogue,
    translate_chapter,
    translation_file,
)
from tutor.runner.client import Runner


def _syntax_problem(code: str, path: Path, course: Course, where: str = "") -> str | None:
    try:
        ast.parse(code, filename=str(path))
    except SyntaxError as exc:
        return f"{_rel(path, course)}: {where}line {exc.lineno}: {exc.msg}"
    return None


# A solution marks the lines that ARE the answer with a trailing `# key` comment (or `// key` on a
# line of C++ inside a source string); the stub must not contain any of them, so its TODOs state
# the task and the hints carry the mechanics.
_KEY_COMMENT = re.compile(r"#\s*key\b")
_KEY_CPP = re.compile(r"//\s*key\b")
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class CodeLine:
    number: int
    tokens: tuple[str, ...]  # the line's code as tokens: whitespace and comments ignored
    key: bool  # marked `# key` (or `// key` inside a C++ source string)
    text: str


def code_lines(source: str) -> list[CodeLine]:
    """Every physical line of a Python file, as tokens without whitespace or comments. Lines
    inside a multi-line string (C++ sources for load_inline) lose their `//` comments instead."""
    raw = source.splitlines()
    comment_at: dict[int, tuple[int, str]] = {}  # line -> (column, text) of its Python comment
    in_string: set[int] = set()  # lines inside a multi-line string (not its first)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                comment_at[tok.start[0]] = (tok.start[1], tok.string)
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                in_string.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a file that does not parse is reported by the syntax rule; cut comments naively
    lines = []
    for number, text in enumerate(raw, start=1):
        code, key = text, False
        if number in comment_at:  # a Python comment (also after a string that closes here)
            column, comment = comment_at[number]
            code, key = text[:column], bool(_KEY_COMMENT.match(comment))
        if number in in_string and "//" in code:
            code, _, comment = code.partition("//")
            key = key or bool(_KEY_CPP.match("//" + comment))
        lines.append(CodeLine(number, tuple(_WORD.findall(code)), key, text.strip()))
    return lines


def key_line_problems(stub: Path, solution: Path, course: Course) -> list[str]:
    """One problem per stub line that equals (token for token) a line the solution marks key."""
    keys: dict[tuple[str, ...], CodeLine] = {}
    problems = []
    for line in code_lines(solution.read_text(encoding="utf-8")):
        if line.key and not line.tokens:
            problems.append(f"{_rel(solution, course)}:{line.number}: a `# key` mark on a line with no code")
        elif line.key:
            keys.setdefault(line.tokens, line)
    for line in code_lines(stub.read_text(encoding="utf-8")):
        if line.tokens in keys:
            shown = " ".join(line.tokens) if len(line.text) > 100 else line.text
            problems.append(
                f"{_rel(stub, course)}:{line.number}: the stub contains the solution's key line "
                f"{keys[line.tokens].number} ({shown[:100]}); state the task in the TODO and "
                "move the code into a hint"
            )
    return problems


def static_problems(course: Course) -> list[str]:
    """Problems found without running anything."""
    found: list[str | None] = []
    for chapter in course.chapters:
        for step in chapter.steps:
            for path in step.texts.values():
                for i, block in enumerate(code_blocks(path.read_text(encoding="utf-8"))):
                    if block.language == "python":
                        found.append(_syntax_problem(block.code, path, course, f"python block {i}: "))
            if not isinstance(step, Exercise):
                continue
            if "TODO" not in step.stub.read_text(encoding="utf-8"):
                found.append(f"{_rel(step.stub, course)}: the stub has no TODO marker")
            found.extend(key_line_problems(step.stub, step.solution, course))
            # The exercise's files and the chapter's shared checker helpers (checks/_*.py).
            for path in (step.stub, step.solution, step.checker, *step.checker.parent.glob("_*.py")):
                found.append(_syntax_problem(path.read_text(encoding="utf-8"), path, course))
            if "def check" not in step.checker.read_text(encoding="utf-8"):
                found.append(f"{_rel(step.checker, course)}: no `def check(ctx)`")
    return list(dict.fromkeys(p for p in found if p))  # a shared helper is seen once per exercise


def translation_problems(course: Course) -> list[str]:
    """Every translated guide has the same ```python blocks as the English one, byte for byte
    and in the same order (fence line included), so type-along passages, `python run` blocks
    and the manifest's `block =` index mean the same code in every language."""
    problems = []
    for step in course.steps():
        english = step.texts[DEFAULT_LANGUAGE]
        en_blocks = [b for b in code_blocks(english.read_text(encoding="utf-8")) if b.language == "python"]
        for lang, path in sorted(step.texts.items()):
            if lang == DEFAULT_LANGUAGE:
                continue
            blocks = [b for b in code_blocks(path.read_text(encoding="utf-8")) if b.language == "python"]
            where = f"{_rel(path, course)}: "
            if len(blocks) != len(en_blocks):
                problems.append(
                    f"{where}has {len(blocks)} python code block(s), guide/{DEFAULT_LANGUAGE}/"
                    f"{english.name} has {len(en_blocks)}; code must be the same in every language"
                )
                continue
            for i, (mine, theirs) in enumerate(zip(blocks, en_blocks)):
                if mine.info != theirs.info:
                    problems.append(
                        f"{where}python block {i}: fenced as ```{mine.info}, the English one as ```{theirs.info}"
                    )
                elif mine.code != theirs.code:
                    problems.append(
                        f"{where}python block {i}: differs from guide/{DEFAULT_LANGUAGE}/{english.name} "
                        f"{_first_difference(mine.code, theirs.code)}; copy the English block unchanged"
                    )
    return problems


def reason_problems(course: Course) -> list[str]:
    """Every reason a checker composes goes through ctx.t and has a translation in each
    language the chapter is translated to; every translated mistake can be reached."""
    problems = []
    lessons = course.chapters[0].directory.parent if course.chapters else None
    langs = [lang for lang in available_languages(lessons) if lang != DEFAULT_LANGUAGE]
    for chapter in course.chapters:
        catalogues = {
            lang: reason_catalogue(chapter.directory, lang)
            for lang in langs
            if translation_file(chapter.directory, lang).exists()
        }
        checks = sorted((chapter.directory / "checks").glob("*.py"))
        used: set[str] = set()
        if checks:
            found, used = reason_lint.reason_problems(checks, catalogues, chapter.directory.parent.parent)
            problems += found
        for lang, table in catalogues.items():
            translated = translate_chapter(chapter, lang)
            templates = [v for k, v in table.items() if k in used] + list(i18n.catalogue(lang).values())
            for e in translated.exercises:
                for j, m in enumerate(e.mistakes):
                    if "mistakes" not in e.fallbacks and not reason_lint.mistake_reachable(m.when, templates):
                        problems.append(
                            f"{chapter.slug}/i18n/{lang}.toml: steps.{e.id}.mistakes[{j}].when {m.when!r} "
                            f"is in no {lang} reason, so its hint would never be offered"
                        )
    return problems


def _first_difference(mine: str, theirs: str) -> str:
    a, b = mine.splitlines(), theirs.splitlines()
    for n, (x, y) in enumerate(zip(a, b), start=1):
        if x != y:
            return f"at line {n} ({x.strip()[:60]!r} instead of {y.strip()[:60]!r})"
    return f"in length ({len(a)} lines instead of {len(b)})" if len(a) != len(b) else "in line endings"


_ANY_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)  # indented ones too
_SHAPE = {
    "heading(s)": re.compile(r"^#{1,6} "),
    "list item(s)": re.compile(r"^\s*(?:[-*+]|\d+[.)]) "),
    "table row(s)": re.compile(r"^\s*\|"),
}


def _shape(markdown: str) -> dict[str, int]:
    lines = _ANY_FENCE.sub("", markdown).splitlines()
    return {name: sum(1 for line in lines if pattern.match(line)) for name, pattern in _SHAPE.items()}


def stale_translations(course: Course) -> list[str]:
    """A translated guide whose headings, list items or table rows are not as many as the
    English guide's was probably written from an older English text (a bullet added since)."""
    warnings = []
    for step in course.steps():
        english = _shape(step.texts[DEFAULT_LANGUAGE].read_text(encoding="utf-8"))
        for lang, path in sorted(step.texts.items()):
            if lang == DEFAULT_LANGUAGE:
                continue
            mine = _shape(path.read_text(encoding="utf-8"))
            diff = [f"{mine[k]} {k}, the English {english[k]}" for k in english if mine[k] != english[k]]
            if diff:
                warnings.append(f"{_rel(path, course)}: {'; '.join(diff)}: the translation may be out of date")
    return warnings


def _literal_asterisks(tokens: list[Token]) -> Iterator[str]:
    for token in tokens:
        if token.children:
            yield from _literal_asterisks(token.children)
        elif token.type == "text" and "*" in token.content:  # an escaped \\* stays text_special
            yield token.content


def emphasis_problems(course: Course) -> list[str]:
    """Emphasis the guide's Markdown renderer leaves as literal asterisks. CommonMark only
    closes `**` after full-width punctuation when a space or punctuation follows, so
    `**连续（contiguous）**的` shows its stars; `**连续**（contiguous）的` does not."""
    # The parser Textual's Markdown widget uses; without text_join, so `\\*` is not flagged.
    parser = MarkdownIt("gfm-like").disable("text_join")
    problems = []
    for step in course.steps():
        for path in sorted(step.texts.values()):
            for text in _literal_asterisks(parser.parse(path.read_text(encoding="utf-8"))):
                problems.append(
                    f"{_rel(path, course)}: emphasis shown as literal asterisks in "
                    f"{text.strip()[:60]!r}: Markdown does not close ** next to full-width "
                    "punctuation; put a gloss after the closing marker (**术语**（term）)"
                )
    return list(dict.fromkeys(problems))  # one guide can be the text of two steps


ZH = "zh"


def _reasons_table(text: str) -> dict[str, str]:
    """A chapter zh.toml's `[reasons]` (the checker's English strings -> zh); {} if unreadable
    (loading the course reports that)."""
    try:
        table = tomllib.loads(text).get("reasons", {})
    except tomllib.TOMLDecodeError:
        return {}
    return (
        {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(table, dict) else {}
    )


def zh_problems(course: Course) -> list[str]:
    """The Chinese texts' rules (tutor/zh_lint.py): the glossary's terms in every zh guide page,
    `i18n/zh.toml` and tutor's `tutor.po`; no brackets inside brackets; and in the guides, no
    line break or space that Markdown shows as a stray space between Chinese characters."""
    found: list[str] = []
    for path in sorted({s.texts[ZH] for s in course.steps() if ZH in s.texts}):
        found += [f"{_rel(path, course)}:{n}: {m}" for n, m in zh_lint.markdown_problems(path.read_text("utf-8"))]
    app = i18n.catalogue(ZH)
    for c in course.chapters:
        # What the zh app shows: tutor's catalogue and this chapter's checker strings.
        path = translation_file(c.directory, ZH)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        english = {**app, **_reasons_table(text)}
        for page in sorted({s.texts[ZH] for s in c.steps if ZH in s.texts}):
            problems = zh_lint.ui_quote_problems(page.read_text("utf-8"), english)
            found += [f"{_rel(page, course)}:{n}: {m}" for n, m in problems]
        # The stub's TODO comments are English: each exercise's zh page states them in Chinese.
        for ex in (e for e in c.exercises if ZH in e.texts):
            tasks = zh_lint.task_problems(ex.texts[ZH].read_text("utf-8"), ex.stub.read_text("utf-8"))
            found += [f"{_rel(ex.texts[ZH], course)}: {m}" for m in tasks]
        if text:
            found += [f"{_rel(path, course)}:{n}: {m}" for n, m in zh_lint.strings_problems(zh_lint.toml_strings(text))]
            hints = zh_lint.strings_quote_problems(zh_lint.toml_strings(text), english)
            found += [f"{_rel(path, course)}:{n}: {m}" for n, m in hints]
    po = i18n.catalogue_file(ZH)
    if po.exists():
        where = po.relative_to(po.parents[4]) if len(po.parents) > 4 else po
        text = po.read_text(encoding="utf-8")
        found += [f"{where}:{n}: {m}" for n, m in zh_lint.strings_problems(zh_lint.po_strings(text))]
    return found


def untranslated_report(lessons: Path | None = None, solutions: Path | None = None) -> tuple[list[str], list[str]]:
    """(problems, warnings) for every language the course has besides English: a translation
    file that does not load is a problem; a field still in English is only a warning."""
    problems: list[str] = []
    warnings: list[str] = []
    for lang in available_languages(lessons):
        if lang == DEFAULT_LANGUAGE:
            continue
        try:
            translated = load_course(lessons, solutions, lang=lang)
        except LessonError as exc:
            problems.append(str(exc))
            continue
        warnings.extend(str(u) for u in translated.untranslated())
    return problems, warnings


def _rel(path: Path, course: Course) -> str:
    for parent in path.parents:
        if parent.name in ("lessons", "solutions"):
            return str(path.relative_to(parent.parent))
    return str(path)


def mistake_problems(exercises: list[Exercise], runner: Runner, scratch: Path, run: bool = True) -> list[str]:
    """Every targeted hint is reachable: its mutant (the mistake written into the solution)
    fails the check with a reason that contains the mistake's words."""
    problems: list[str] = []
    # The mistakes' words are the English manifest's: the checks speak English for this.
    spoken = i18n.language()
    i18n.set_language(DEFAULT_LANGUAGE)
    try:
        for e in exercises:
            problems += _mistakes_of(e, runner, scratch, run)
    finally:
        i18n.set_language(spoken)
    return problems


def _mistakes_of(e: Exercise, runner: Runner, scratch: Path, run: bool) -> list[str]:
    """The problems with one exercise's targeted hints (see `mistake_problems`)."""
    problems: list[str] = []
    solution = e.solution.read_text(encoding="utf-8")
    for j, m in enumerate(e.mistakes):
        where = f"{e.key}: mistakes[{j}]"
        if not m.mutant:
            problems.append(f"{where}: no mutant, so nothing shows that its hint can be reached")
            continue
        source = solution
        missing = [old for old, _ in m.mutant if old not in source]
        if missing:
            problems.append(f"{where}: the mutant's text {missing[0]!r} is not in the solution")
            continue
        for old, new in m.mutant:
            source = source.replace(old, new)
        if not run:
            continue
        path = scratch / f"{e.id}-mistake-{j}" / e.stub.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        v = runner.check(e, path)
        if v.status == Status.SKIPPED:
            continue
        if v.status != Status.FAILED or not m.matches(v.reason):
            problems.append(
                f"{where}: its mutant gives {v.status}: {v.reason[:160]!r}, which does not "
                f"contain {m.when!r}: the targeted hint would never be offered"
            )
    return problems
