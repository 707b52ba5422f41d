"""The course model: chapters, steps and exercises, loaded from `lessons/*/lesson.toml`.

Lessons are data. Every manifest is validated on load and every problem is reported as
`lessons/02-custom-autograd/lesson.toml: steps[3].hints: must be a non-empty list`.
Plain Python: no torch, no Textual.

Languages: `load_course(lang="zh")` gives a course whose texts, titles, summaries and hints are
in Chinese wherever a translation exists, English otherwise, field by field. Guides come from
`guide/zh/<file>`; the rest from `i18n/zh.toml` beside the manifest (the manifest stays English):

    title = "..."              # the chapter's title and summary
    summary = "..."
    [steps.sigmoid]            # keyed by step id
    title = "..."
    hints = ["...", "..."]     # exercises only, as many as the English ones

`Course.untranslated()` says which fields fell back to English.
"""

from __future__ import annotations

import os
import re
import string
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from tutor import paths
from tutor.runner.protocol import CONTRACT_CATEGORIES


def _tomllib() -> Any:
    """The TOML parser, imported on the first real load: `tutor start` from the course cache
    reads no TOML and skips the import (~1.4 ms)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


FORMAT_VERSION = 1
MANIFEST = "lesson.toml"
DEFAULT_LANGUAGE = "en"
STEP_KINDS = ("read", "passage", "exercise")
DEVICES = ("cpu", "any", "cuda")  # any: CUDA when present (or asked for), else CPU
_SLUG = re.compile(r"^(\d\d)-[a-z0-9][a-z0-9-]*$")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_LANG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$")
I18N_DIR = "i18n"
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
    processes: int = 1  # the first (or only) world size
    # `processes = [2, 4]`: every world size the check runs at, in order (tutor.runner.worlds);
    # empty when there is one
    worlds: tuple[int, ...] = ()

    @property
    def world_sizes(self) -> tuple[int, ...]:
        """Every world size a check of this exercise runs at, in order."""
        return self.worlds or (self.processes,)

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
        if len(self.world_sizes) > 1:
            *first, last = self.world_sizes
            return f"runs {', '.join(map(str, first))} processes, then {last}"
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
    title: str  # in the course's language where translated, else English
    texts: dict[str, Path]  # language -> Markdown file (every guide/<lang>/ that has the file)
    language: str = DEFAULT_LANGUAGE  # the language the course was loaded in
    fallbacks: tuple[str, ...] = ()  # fields shown in English: "guide", "title", "hints"

    @property
    def key(self) -> str:
        """Unique across the course: `02-custom-autograd/sigmoid`."""
        return f"{self.chapter_slug}/{self.id}"

    def text_path(self, language: str | None = None) -> Path:
        """The guide file in `language` (default: the course's), else the English one."""
        return self.texts.get(language or self.language) or self.texts[DEFAULT_LANGUAGE]

    def text(self, language: str | None = None) -> str:
        return self.text_path(language).read_text(encoding="utf-8")


@dataclass(frozen=True)
class ReadStep(Step):
    pass


@dataclass(frozen=True)
class Passage(Step):
    """A code block of the guide that the learner types along with."""

    block: int = 0
    run: bool = False

    def code(self, language: str | None = None) -> str:
        blocks = [b for b in code_blocks(self.text(language)) if b.language == "python"]
        return blocks[self.block].code


@dataclass(frozen=True)
class Mistake:
    """A mistake learners make on an exercise, recognised by words of the failure reason.

    `hint` answers exactly that mistake; `mutant` is the mistake written into the reference
    solution as (old, new) edits, which `tutor dev check` runs to prove the words match."""

    when: str
    hint: str
    mutant: tuple[tuple[str, str], ...] = ()

    def matches(self, reason: str) -> bool:
        return self.when.casefold() in reason.casefold()


@dataclass(frozen=True)
class Exercise(Step):
    stub: Path = Path()
    solution: Path = Path()
    checker: Path = Path()
    hints: tuple[str, ...] = ()
    timeout: float = 60.0
    needs: Needs = field(default_factory=Needs)
    mistakes: tuple[Mistake, ...] = ()
    # What the task lets a call change beyond what the reference's calls change (the call
    # contract's categories, tutor.runner.contract.CATEGORIES).
    allows: tuple[str, ...] = ()

    def mistake_for(self, reason: str) -> Mistake | None:
        """The known mistake a failure reason points to, if any (the first that matches)."""
        return next((m for m in self.mistakes if m.matches(reason)), None)

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
    languages: tuple[str, ...]  # the manifest's: every step must have a guide in each
    steps: tuple[Step, ...]
    language: str = DEFAULT_LANGUAGE
    fallbacks: tuple[str, ...] = ()  # chapter fields shown in English: "title", "summary"

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
class Untranslated:
    """A chapter or step some of whose fields fall back to English in `language`."""

    where: str  # `02-custom-autograd` (the chapter) or `02-custom-autograd/sigmoid`
    language: str
    fields: tuple[str, ...]  # guide, title, summary, hints

    def __str__(self) -> str:
        return f"{self.where}: no {self.language} {', '.join(self.fields)}"


@dataclass(frozen=True)
class Course:
    chapters: tuple[Chapter, ...]
    language: str = DEFAULT_LANGUAGE

    def untranslated(self) -> list[Untranslated]:
        """Every chapter and step with a field shown in English although the course's
        language is another one, in course order; empty for an English course."""
        if self.language == DEFAULT_LANGUAGE:
            return []
        out = []
        for c in self.chapters:
            if c.fallbacks:
                out.append(Untranslated(c.slug, self.language, c.fallbacks))
            out.extend(Untranslated(s.key, self.language, s.fallbacks) for s in c.steps if s.fallbacks)
        return out

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
        return str(value)

    def file_in(self, key: str, base: Path) -> Path:
        rel = self.text(key)
        path = (base / rel).resolve()
        if not path.is_file():
            raise self.error(key, f"file not found: {_display(base / rel)}")
        return path


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "a table",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def load_chapter(directory: Path, solutions: Path | None = None, lang: str = DEFAULT_LANGUAGE) -> Chapter:
    """Load and validate one chapter folder in `lang` (English wherever a field has no
    translation); raise LessonError on the first problem."""
    _check_language(lang)
    directory = directory.resolve()
    manifest = directory / MANIFEST
    slug_match = _SLUG.match(directory.name)
    if not slug_match:
        raise LessonError(directory, "", "chapter folder must be named NN-slug, e.g. 03-cpp-ops")
    if not manifest.is_file():
        raise LessonError(manifest, "", "manifest is missing")
    toml = _tomllib()
    try:
        data = toml.loads(manifest.read_text(encoding="utf-8"))
    except toml.TOMLDecodeError as exc:
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
    optional = [lang for lang in _guide_languages(directory) if lang not in languages]
    for i, raw in enumerate(raw_steps):
        f = _Fields(manifest, raw, f"steps[{i}]")
        steps.append(_load_step(f, i, directory, solutions, tuple(languages), seen, optional))
    chapter = Chapter(
        number=number,
        slug=directory.name,
        title=title,
        summary=summary,
        directory=directory,
        languages=tuple(languages),
        steps=tuple(steps),
    )
    return chapter if lang == DEFAULT_LANGUAGE else _translate(chapter, lang)


def _load_step(
    f: _Fields,
    index: int,
    directory: Path,
    solutions: Path,
    languages: tuple[str, ...],
    seen: set[str],
    optional: list[str],
) -> Step:
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
    # Languages the manifest does not declare are optional, step by step (English fallback).
    for lang in optional:
        if (directory / "guide" / lang / text_name).is_file():
            texts[lang] = directory / "guide" / lang / text_name
    common: dict[str, Any] = {
        "chapter_slug": directory.name,
        "index": index,
        "kind": kind,
        "id": step_id,
        "title": title,
        "texts": texts,
    }
    if kind == "read":
        return ReadStep(**common)
    if kind == "passage":
        block = f.get("block", int, 0)
        blocks = [b for b in code_blocks(texts[DEFAULT_LANGUAGE].read_text(encoding="utf-8")) if b.language == "python"]
        if not 0 <= block < len(blocks):
            raise f.error("block", f"the text has {len(blocks)} python code block(s); block {block} does not exist")
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
    worlds = _world_sizes(nf)
    processes = worlds[0]
    if processes < 1 or gpus < 0:
        raise nf.error("processes", "must be at least 1")
    mistakes = tuple(
        _load_mistake(_Fields(f.file, table, f"{f.name('mistakes')}[{j}]"))
        for j, table in enumerate(f.get("mistakes", list, []))
    )
    allows = f.get("allows", list, [])
    for j, category in enumerate(allows):
        if category not in CONTRACT_CATEGORIES:
            raise LessonError(
                f.file,
                f"{f.name('allows')}[{j}]",
                f"must be one of {', '.join(CONTRACT_CATEGORIES)}, not {category!r}",
            )
    return Exercise(
        **common,
        stub=f.file_in("stub", directory),
        solution=f.file_in("solution", solutions),
        checker=f.file_in("checker", directory),
        hints=tuple(h.strip() for h in hints),
        timeout=float(timeout),
        needs=Needs(
            device=device,  # type: ignore[arg-type]  # checked above
            gpus=gpus,
            processes=processes,
            worlds=worlds if len(worlds) > 1 else (),
        ),
        mistakes=mistakes,
        allows=tuple(allows),
    )


def _world_sizes(nf: _Fields) -> tuple[int, ...]:
    """needs.processes: one count (`processes = 2`), or the world sizes a check runs at in turn
    (`processes = [2, 4]`: distinct, each at least 2, since a size of 1 runs no process group)."""
    value = nf.get("processes", (int, list), 1, "a whole number or a list of them")
    if isinstance(value, int):
        return (value,)
    if len(value) < 2:
        raise nf.error("processes", "a list must hold at least two world sizes (write one as a number)")
    for j, n in enumerate(value):
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise LessonError(nf.file, f"{nf.name('processes')}[{j}]", "must be a whole number of at least 2")
    if len(set(value)) != len(value):
        raise nf.error("processes", f"lists the same world size twice: {value}")
    return tuple(value)


def _load_mistake(f: _Fields) -> Mistake:
    """[[steps.mistakes]]: when = "words of the reason", hint = "...", mutant = [["old", "new"], ...]."""
    if not isinstance(f.table, dict):
        raise LessonError(f.file, f.prefix, "must be a table with when, hint and mutant")
    unknown = sorted(set(f.table) - {"when", "hint", "mutant"})
    if unknown:
        raise f.error(unknown[0], "unknown key (expected when, hint, mutant)")
    when, hint = f.text("when").strip(), f.text("hint").strip()
    if not when:
        raise f.error("when", "must be non-empty words of the failure reason")
    if not hint:
        raise f.error("hint", "must be a non-empty string")
    edits = f.get("mutant", list, [])
    pairs = []
    for j, edit in enumerate(edits):
        if not (isinstance(edit, list) and len(edit) == 2 and all(isinstance(e, str) for e in edit) and edit[0]):
            raise LessonError(f.file, f"{f.name('mutant')}[{j}]", 'must be ["old text", "new text"]')
        pairs.append((edit[0], edit[1]))
    return Mistake(when=when, hint=hint, mutant=tuple(pairs))


def load_course(lessons: Path | None = None, solutions: Path | None = None, lang: str = DEFAULT_LANGUAGE) -> Course:
    """Load every chapter in `lang`; raise LessonError on the first problem found."""
    _check_language(lang)
    lessons = lessons or paths.lessons_dir()
    if not lessons.is_dir():
        raise LessonError(lessons, "", "lessons folder not found")
    chapters = [load_chapter(d, solutions, lang) for d in _chapter_dirs(lessons)]
    seen: dict[str, str] = {}
    numbers: set[int] = set()
    for c in chapters:
        if c.number in numbers:
            raise LessonError(c.directory, "", f"chapter number {c.number} is used twice")
        numbers.add(c.number)
        for e in c.exercises:
            if e.id in seen:
                raise LessonError(
                    c.directory / MANIFEST,
                    f"steps[{e.index}].id",
                    f"exercise id {e.id!r} is already used in {seen[e.id]}",
                )
            seen[e.id] = c.slug
    return Course(chapters=tuple(chapters), language=lang)


# ---------------------------------------------------------------------------------------------
# A cache for `tutor start`: parsing and validating every manifest cost ~25 ms of its first paint.

_CACHE_FORMAT = 2


def load_course_cached(
    cache: Path, lessons: Path | None = None, solutions: Path | None = None, lang: str = DEFAULT_LANGUAGE
) -> Course:
    """`load_course`, reusing the course stored in `cache` by the previous call while none of
    the files and folders it read or checked has changed (size, modification time, inode; a
    folder's time changes when an entry is added or removed). Otherwise, or when the cache
    cannot be read, the course is loaded and validated for real (so errors still name file
    and field) and stored again. The cache lives in the learner's own tutor home."""
    import pickle

    _check_language(lang)
    lessons = lessons or paths.lessons_dir()
    solutions = solutions or paths.solutions_dir()
    key = (_CACHE_FORMAT, FORMAT_VERSION, str(lessons), str(solutions), lang)
    try:
        with cache.open("rb") as fh:
            stored_key, watched, stamps, course = pickle.load(fh)
        if stored_key == key and isinstance(course, Course) and _stamps(watched) == stamps:
            return course
    except Exception:  # missing, truncated, from another version: load for real
        pass
    course = load_course(lessons, solutions, lang)
    watched = _watched_paths(course, lessons, solutions, lang)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps((key, watched, _stamps(watched), course), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, cache)
    except OSError:  # a read-only home: the next start loads for real again
        pass
    return course


def _watched_paths(course: Course, lessons: Path, solutions: Path, lang: str) -> list[str]:
    """Everything load_course read, listed or checked for existence (and this module)."""
    out = [__file__, str(lessons)]
    for c in course.chapters:
        d = c.directory
        out += [
            str(d),
            str(d / MANIFEST),
            str(solutions / d.name),
            str(d / I18N_DIR),
            str(translation_file(d, lang)),
            str(d / "guide"),
        ]
        out += [str(g) for g in sorted((d / "guide").glob("*")) if g.is_dir()]
        for s in c.steps:
            out += [str(p) for p in s.texts.values()]
            if isinstance(s, Exercise):
                out += [str(s.stub), str(s.solution), str(s.checker)]
    return out


def _stamps(watched: list[str]) -> list[tuple[int, int, int] | None]:
    out: list[tuple[int, int, int] | None] = []
    for p in watched:
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return out


def _chapter_dirs(lessons: Path) -> list[Path]:
    return [d for d in sorted(lessons.iterdir()) if d.is_dir() and not d.name.startswith((".", "_"))]


# ---------------------------------------------------------------------------------------------
# Languages


def _check_language(lang: str) -> None:
    # The code becomes part of file paths (guide/<lang>/, i18n/<lang>.toml): no separators.
    if not isinstance(lang, str) or not _LANG.match(lang):
        raise ValueError(f"not a language code: {lang!r} (expected something like 'en' or 'zh')")


def _guide_languages(directory: Path) -> list[str]:
    guide = directory / "guide"
    if not guide.is_dir():
        return []
    return sorted(d.name for d in guide.iterdir() if d.is_dir() and _LANG.match(d.name))


def available_languages(lessons: Path | None = None) -> tuple[str, ...]:
    """English first, then every language some chapter has a guide or an i18n file in."""
    lessons = lessons or paths.lessons_dir()
    found: set[str] = set()
    if lessons.is_dir():
        for d in _chapter_dirs(lessons):
            found.update(_guide_languages(d))
            if (d / I18N_DIR).is_dir():
                found.update(f.stem for f in (d / I18N_DIR).glob("*.toml") if _LANG.match(f.stem))
    found.discard(DEFAULT_LANGUAGE)
    return (DEFAULT_LANGUAGE, *sorted(found))


def translation_file(directory: Path, lang: str) -> Path:
    """`lessons/NN-slug/i18n/<lang>.toml`: the chapter's titles, summary and hints in `lang`."""
    return directory / I18N_DIR / f"{lang}.toml"


_CHAPTER_KEYS = ("title", "summary", "steps", "reasons")
_STEP_KEYS = ("title", "hints", "mistakes")


def _read_translation(directory: Path, lang: str) -> _Fields | None:
    path = translation_file(directory, lang)
    if not path.exists():
        return None
    toml = _tomllib()
    try:
        data = toml.loads(path.read_text(encoding="utf-8"))
    except toml.TOMLDecodeError as exc:
        raise LessonError(path, "", f"not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(path, "", f"cannot be read: {exc}") from None
    return _Fields(path, data, "")


def _unknown_keys(f: _Fields, allowed: tuple[str, ...]) -> None:
    # A misspelt key (`titel`) would otherwise be ignored and the field silently stay English.
    for key in f.table:
        if key not in allowed:
            raise f.error(key, f"unknown key; expected one of {', '.join(allowed)}")


def translate_chapter(chapter: Chapter, lang: str) -> Chapter:
    """`chapter` (loaded in English) with its texts in `lang`, validated like `load_course`."""
    return _translate(chapter, lang)


def _translate(chapter: Chapter, lang: str) -> Chapter:
    """The chapter with its titles, summary and hints taken from i18n/<lang>.toml where
    present, validated against the English manifest."""
    top = _read_translation(chapter.directory, lang)
    table: dict[str, Any] = {}
    if top is not None:
        _unknown_keys(top, _CHAPTER_KEYS)
        table = top.get("steps", dict, {}, "a table of step ids")
        _reason_table(top)  # validated on load: a broken field fails here
    by_id = {s.id: s for s in chapter.steps}
    for step_id in table:
        if step_id not in by_id:
            assert top is not None
            raise top.error(f"steps.{step_id}", f"no step {step_id!r} in {chapter.slug}/lesson.toml")

    chapter_fallbacks = []
    title, summary = chapter.title, chapter.summary
    if top is not None and "title" in top.table:
        title = top.text("title")
    else:
        chapter_fallbacks.append("title")
    if top is not None and "summary" in top.table:
        summary = top.text("summary")
    elif chapter.summary:
        chapter_fallbacks.append("summary")

    steps = []
    for step in chapter.steps:
        fallbacks = [] if lang in step.texts else ["guide"]
        changes: dict[str, Any] = {"language": lang}
        if step.id in table:
            assert top is not None
            sf = _Fields(top.file, table[step.id], f"steps.{step.id}")
            _unknown_keys(sf, _STEP_KEYS)
            if "title" in sf.table:
                changes["title"] = sf.text("title")
            if "hints" in sf.table:
                changes["hints"] = _translated_hints(sf, step)
            if "mistakes" in sf.table:
                changes["mistakes"] = _translated_mistakes(sf, step)
        if "title" not in changes:
            fallbacks.append("title")
        if isinstance(step, Exercise) and "hints" not in changes:
            fallbacks.append("hints")
        if isinstance(step, Exercise) and step.mistakes and "mistakes" not in changes:
            fallbacks.append("mistakes")
        steps.append(replace(step, fallbacks=tuple(fallbacks), **changes))
    return replace(
        chapter, title=title, summary=summary, steps=tuple(steps), language=lang, fallbacks=tuple(chapter_fallbacks)
    )


def _translated_mistakes(f: _Fields, step: Step) -> tuple[Mistake, ...]:
    """`mistakes = [{when = "...", hint = "..."}, ...]`, one per English [[steps.mistakes]] in
    the same order: `when` is words of the reason as the checker says it in this language."""
    if not isinstance(step, Exercise):
        raise f.error("mistakes", f"only exercises have mistakes; {step.id!r} is a {step.kind} step")
    tables = f.get("mistakes", list)
    if len(tables) != len(step.mistakes):
        raise f.error(
            "mistakes",
            f"has {len(tables)} entries, the English manifest has {len(step.mistakes)}; translate each one once",
        )
    out = []
    for j, (table, english) in enumerate(zip(tables, step.mistakes)):
        mf = _Fields(f.file, table, f"{f.name('mistakes')}[{j}]")
        _unknown_keys(mf, ("when", "hint"))
        out.append(replace(english, when=mf.text("when"), hint=mf.text("hint")))
    return tuple(out)


def reason_catalogue(directory: Path, lang: str) -> dict[str, str]:
    """The chapter's checker reasons in `lang` (`[reasons]` of i18n/<lang>.toml): English
    template -> translated template, with the same {fields}."""
    f = _read_translation(directory, lang)
    return {} if f is None else _reason_table(f)


def _reason_table(f: _Fields) -> dict[str, str]:
    """The validated `[reasons]` table of a translation file already read."""
    table = f.get("reasons", dict, {}, "a table of English reason -> translation")
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip():
            raise LessonError(f.file, f"reasons.{key!r}", "must be a non-empty string")
        if _fields_of(key) != _fields_of(value):
            raise LessonError(
                f.file,
                f"reasons.{key!r}",
                f"uses the fields {sorted(_fields_of(value))}, the English uses {sorted(_fields_of(key))}",
            )
    return dict(table)


def _fields_of(template: str) -> set[str]:
    """The {field} names of a str.format template (a broken template has none we can trust)."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    except ValueError:
        return {"<malformed>"}


def _translated_hints(f: _Fields, step: Step) -> tuple[str, ...]:
    if not isinstance(step, Exercise):
        raise f.error("hints", f"only exercises have hints; {step.id!r} is a {step.kind} step")
    hints = f.get("hints", list)
    for j, hint in enumerate(hints):
        if not isinstance(hint, str) or not hint.strip():
            raise LessonError(f.file, f"{f.name('hints')}[{j}]", "must be a non-empty string")
    # Hint n is revealed after n-1 others: a different count would pair hints up wrongly.
    if len(hints) != len(step.hints):
        raise f.error(
            "hints",
            f"has {len(hints)} hints, the English manifest has {len(step.hints)}; translate each English hint once",
        )
    return tuple(h.strip() for h in hints)
