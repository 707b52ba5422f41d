"""The course model: chapters, steps and exercises, loaded from `lessons/*/lesson.toml`.

Lessons are data. Every manifest is validated on load and every problem is reported as
`lessons/02-custom-autograd/lesson.toml: steps[3].hints: must be a non-empty list`.
Plain Python: no torch, no Textual.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from tutor import paths

FORMAT_VERSION = 1
MANIFEST = "lesson.toml"
DEFAULT_LANGUAGE = "en"
STEP_KINDS = ("read", "passage", "exercise")
DEVICES = ("cpu", "any", "cuda")  # any: CUDA when present (or asked for), else CPU
_SLUG = re.compile(r"^(\d\d)-[a-z0-9][a-z0-9-]*$")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


class LessonError(Exception):
    """A problem in a lesson file, phrased as `file: field: what is wrong`."""

    def __init__(self, file: Path, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        super().__init__(str(self))

    def __str__(self) -> str:
        where = _display(self.file)
        return f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"


def _display(path: Path) -> str:
    root = paths.course_root()
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Needs:
    """What an exercise needs to run: a device kind, how many GPUs and processes."""

    device: Literal["cpu", "any", "cuda"] = "cpu"
    gpus: int = 0
    processes: int = 1

    def device_here(self, gpus: int, requested: str = "auto") -> tuple[str | None, str]:
        """The device this runs on with `gpus` GPUs and `--device requested`, or None with
        the reason it cannot run (the one rule the runner and `tutor doctor` both use)."""
        if self.device == "cuda":
            if requested == "cpu":
                return None, self.describe() + " (--device cpu was asked for)"
            if gpus < max(1, self.gpus):
                return None, self.describe()
            return "cuda", ""
        if self.device == "any":
            if requested == "cuda" and gpus == 0:
                return None, "needs a CUDA GPU (--device cuda was asked for)"
            return ("cuda" if gpus and requested != "cpu" else "cpu"), ""
        return "cpu", ""

    def describe(self) -> str:
        if self.device == "cuda":
            n = max(self.gpus, 1)
            return "needs a CUDA GPU" if n == 1 else f"needs {n} CUDA GPUs"
        if self.processes > 1:
            return f"runs {self.processes} processes"
        return "runs on CPU"


@dataclass(frozen=True)
class CodeBlock:
    language: str
    info: str
    code: str

    @property
    def runnable(self) -> bool:
        """Blocks fenced as ```python run are executed by the test suite, not only compiled."""
        return "run" in self.info.split()[1:]


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of a Markdown text, in order."""
    blocks = []
    for match in _FENCE.finditer(markdown):
        info = match.group(1).strip()
        language = info.split()[0] if info else ""
        blocks.append(CodeBlock(language=language, info=info, code=match.group(2)))
    return blocks


@dataclass(frozen=True)
class Step:
    chapter_slug: str
    index: int
    kind: str
    id: str
    title: str
    texts: dict[str, Path]  # language -> Markdown file

    @property
    def key(self) -> str:
        """Unique across the course: `02-custom-autograd/sigmoid`."""
        return f"{self.chapter_slug}/{self.id}"

    def text_path(self, language: str = DEFAULT_LANGUAGE) -> Path:
        return self.texts.get(language) or self.texts[DEFAULT_LANGUAGE]

    def text(self, language: str = DEFAULT_LANGUAGE) -> str:
        return self.text_path(language).read_text(encoding="utf-8")


@dataclass(frozen=True)
class ReadStep(Step):
    pass


@dataclass(frozen=True)
class Passage(Step):
    """A code block of the guide that the learner types along with."""

    block: int = 0
    run: bool = False

    def code(self, language: str = DEFAULT_LANGUAGE) -> str:
        blocks = [b for b in code_blocks(self.text(language)) if b.language == "python"]
        return blocks[self.block].code


@dataclass(frozen=True)
class Exercise(Step):
    stub: Path = Path()
    solution: Path = Path()
    checker: Path = Path()
    hints: tuple[str, ...] = ()
    timeout: float = 60.0
    needs: Needs = field(default_factory=Needs)

    @property
    def workspace_name(self) -> str:
        """Path of the learner's copy, relative to the workspace root."""
        return f"{self.chapter_slug}/{self.stub.name}"


@dataclass(frozen=True)
class Chapter:
    number: int
    slug: str
    title: str
    summary: str
    directory: Path
    languages: tuple[str, ...]
    steps: tuple[Step, ...]

    @property
    def exercises(self) -> list[Exercise]:
        return [s for s in self.steps if isinstance(s, Exercise)]

    @property
    def passages(self) -> list[Passage]:
        return [s for s in self.steps if isinstance(s, Passage)]

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


@dataclass(frozen=True)
class Course:
    chapters: tuple[Chapter, ...]

    def chapter(self, number: int) -> Chapter:
        for c in self.chapters:
            if c.number == number:
                return c
        raise KeyError(number)

    @property
    def exercises(self) -> list[Exercise]:
        return [e for c in self.chapters for e in c.exercises]

    @cached_property
    def _by_id(self) -> dict[str, Exercise]:
        out: dict[str, Exercise] = {}
        for e in self.exercises:
            out[e.id] = e
            out[e.key] = e
        return out

    def exercise(self, ident: str) -> Exercise:
        """Look an exercise up by id (`sigmoid`) or key (`02-custom-autograd/sigmoid`)."""
        return self._by_id[ident]

    def exercise_ids(self) -> list[str]:
        return [e.id for e in self.exercises]

    def chapter_of(self, step: Step) -> Chapter:
        for c in self.chapters:
            if c.slug == step.chapter_slug:
                return c
        raise KeyError(step.chapter_slug)

    def steps(self) -> Iterator[Step]:
        for c in self.chapters:
            yield from c.steps


# ---------------------------------------------------------------------------------------------
# Validation


class _Fields:
    """Typed access to one TOML table that raises LessonError naming the field."""

    def __init__(self, file: Path, table: Any, prefix: str) -> None:
        self.file = file
        self.prefix = prefix
        if not isinstance(table, dict):
            raise LessonError(file, prefix, "must be a table")
        self.table = table

    def name(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, problem: str) -> LessonError:
        return LessonError(self.file, self.name(key), problem)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., what: str = "") -> Any:
        if key not in self.table:
            if default is ...:
                raise self.error(key, "is required")
            return default
        value = self.table[key]
        # bool is an int in Python; a manifest that says `timeout = true` is wrong.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.error(key, f"must be {what or _kind_name(kind)}")
        if not isinstance(value, kind):
            raise self.error(key, f"must be {what or _kind_name(kind)}")
        return value

    def text(self, key: str, default: Any = ...) -> str:
        value = self.get(key, str, default, "a string")
        if value is not default and not value.strip():
            raise self.error(key, "must not be empty")
        return value

    def file_in(self, key: str, base: Path) -> Path:
        rel = self.text(key)
        path = (base / rel).resolve()
        if not path.is_file():
            raise self.error(key, f"file not found: {_display(base / rel)}")
        return path


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
             list: "a list", dict: "a table"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def load_chapter(directory: Path, solutions: Path | None = None) -> Chapter:
    """Load and validate one chapter folder; raise LessonError on the first problem."""
    directory = directory.resolve()
    manifest = directory / MANIFEST
    slug_match = _SLUG.match(directory.name)
    if not slug_match:
        raise LessonError(directory, "", "chapter folder must be named NN-slug, e.g. 03-cpp-ops")
    if not manifest.is_file():
        raise LessonError(manifest, "", "manifest is missing")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LessonError(manifest, "", f"not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(manifest, "", f"cannot be read: {exc}") from None

    top = _Fields(manifest, data, "")
    version = top.get("format_version", int)
    if version != FORMAT_VERSION:
        raise top.error("format_version", f"is {version}, this tutor reads version {FORMAT_VERSION}")
    number = int(slug_match.group(1))
    title = top.text("title")
    summary = top.text("summary", "")
    languages = top.get("languages", list, [DEFAULT_LANGUAGE])
    if DEFAULT_LANGUAGE not in languages or not all(isinstance(x, str) for x in languages):
        raise top.error("languages", f"must be a list of language codes including {DEFAULT_LANGUAGE!r}")
    raw_steps = top.get("steps", list)
    if not raw_steps:
        raise top.error("steps", "must be a non-empty list")

    solutions = (solutions or paths.solutions_dir()) / directory.name
    steps: list[Step] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_steps):
        f = _Fields(manifest, raw, f"steps[{i}]")
        steps.append(_load_step(f, i, directory, solutions, tuple(languages), seen))
    return Chapter(number=number, slug=directory.name, title=title, summary=summary,
                   directory=directory, languages=tuple(languages), steps=tuple(steps))


def _load_step(f: _Fields, index: int, directory: Path, solutions: Path,
               languages: tuple[str, ...], seen: set[str]) -> Step:
    kind = f.text("kind")
    if kind not in STEP_KINDS:
        raise f.error("kind", f"must be one of {', '.join(STEP_KINDS)}, not {kind!r}")
    step_id = f.text("id")
    if not _ID.match(step_id):
        raise f.error("id", "must be lower-case letters, digits and dashes")
    if step_id in seen:
        raise f.error("id", f"{step_id!r} is used by an earlier step")
    seen.add(step_id)
    title = f.text("title")
    text_name = f.text("text")
    texts: dict[str, Path] = {}
    for lang in languages:
        path = directory / "guide" / lang / text_name
        if not path.is_file():
            raise f.error("text", f"file not found: {_display(path)}")
        texts[lang] = path
    common = dict(chapter_slug=directory.name, index=index, kind=kind, id=step_id,
                  title=title, texts=texts)
    if kind == "read":
        return ReadStep(**common)
    if kind == "passage":
        block = f.get("block", int, 0)
        blocks = [b for b in code_blocks(texts[DEFAULT_LANGUAGE].read_text(encoding="utf-8"))
                  if b.language == "python"]
        if not 0 <= block < len(blocks):
            raise f.error("block", f"the text has {len(blocks)} python code block(s); "
                                   f"block {block} does not exist")
        runnable = blocks[block].runnable
        run = f.get("run", bool, runnable)
        if run != runnable:
            raise f.error("run", "must match the code block's fence: ```python run marks a runnable block")
        return Passage(**common, block=block, run=run)

    hints = f.get("hints", list)
    if not hints:
        raise f.error("hints", "must be a non-empty list")
    if not 3 <= len(hints) <= 5:
        raise f.error("hints", f"must hold 3 to 5 hints, not {len(hints)}")
    for j, hint in enumerate(hints):
        if not isinstance(hint, str) or not hint.strip():
            raise LessonError(f.file, f"{f.name('hints')}[{j}]", "must be a non-empty string")
    timeout = f.get("timeout", (int, float), 60)
    if not 0 < timeout <= 600:
        raise f.error("timeout", "must be between 0 and 600 seconds")
    needs_table = f.get("needs", dict, {})
    nf = _Fields(f.file, needs_table, f.name("needs"))
    device = nf.text("device", "cpu")
    if device not in DEVICES:
        raise nf.error("device", f"must be one of {', '.join(DEVICES)}, not {device!r}")
    gpus = nf.get("gpus", int, 1 if device == "cuda" else 0)
    processes = nf.get("processes", int, 1)
    if processes < 1 or gpus < 0:
        raise nf.error("processes", "must be at least 1")
    return Exercise(
        **common,
        stub=f.file_in("stub", directory),
        solution=f.file_in("solution", solutions),
        checker=f.file_in("checker", directory),
        hints=tuple(h.strip() for h in hints),
        timeout=float(timeout),
        needs=Needs(device=device, gpus=gpus, processes=processes),
    )


def load_course(lessons: Path | None = None, solutions: Path | None = None) -> Course:
    """Load every chapter; raise LessonError on the first problem found."""
    lessons = lessons or paths.lessons_dir()
    if not lessons.is_dir():
        raise LessonError(lessons, "", "lessons folder not found")
    chapters = [load_chapter(d, solutions) for d in sorted(lessons.iterdir())
                if d.is_dir() and not d.name.startswith((".", "_"))]
    seen: dict[str, str] = {}
    numbers: set[int] = set()
    for c in chapters:
        if c.number in numbers:
            raise LessonError(c.directory, "", f"chapter number {c.number} is used twice")
        numbers.add(c.number)
        for e in c.exercises:
            if e.id in seen:
                raise LessonError(c.directory / MANIFEST, f"steps[{e.index}].id",
                                  f"exercise id {e.id!r} is already used in {seen[e.id]}")
            seen[e.id] = c.slug
    return Course(chapters=tuple(chapters))
