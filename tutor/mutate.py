"""`tutor dev mutate`: operator mutants of an exercise's reference solution, each run through the
real checker, and the per-chapter record of what survived.

The mutants come from cosmic-ray's operators (every `+` made `-`, `*`, ..., every comparison
flipped, every number nudged, every decorator removed, every loop run zero times), applied one
at a time to the solution. A mutant the check rejects is killed; one it passes survived: either
the checker is blind there, or the change does not change behaviour (an equivalent mutant).
`lessons/NN-slug/mutants.toml` records, per exercise, the hashes of the solution and checker it
was measured on, the score, and every survivor with a one-line reason when it is equivalent.
`tutor dev check` reports the scores and fails when a record is stale.

Plain Python: the checks run in the runner's processes, like every check.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.status import Status
from tutor.course import Course, Exercise, _tomllib
from tutor.seeds import seed_pool

RECORD = "mutants.toml"
FORMAT_VERSION = 1
REJECTED = (Status.FAILED, Status.ERROR, Status.TIMEOUT, Status.CRASHED)
# cosmic-ray operators that need arguments or only rename variables (mostly noise here).
_SKIPPED_OPERATORS = ("core/VariableReplacer", "core/VariableInserter", "core/ExceptionReplacer")
# Bitwise and shift operators put where arithmetic was only raise on float tensors: noise.
_BITWISE = ("BitAnd", "BitOr", "BitXor", "LShift", "RShift")


def _wanted(name: str) -> bool:
    if name.startswith(_SKIPPED_OPERATORS):
        return False
    if name.startswith("core/ReplaceBinaryOperator_"):
        source, target = name.removeprefix("core/ReplaceBinaryOperator_").split("_", 1)
        return not (target in _BITWISE and source not in _BITWISE)
    return True


def fingerprint(exercise: Exercise) -> dict[str, str]:
    """What a record was measured on: the solution's and the checker's text, and the
    chapter's checker helpers (`checks/_*.py`), which judge as much as the checker does."""

    def sha(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]

    helpers = hashlib.sha256()
    for path in sorted(exercise.checker.parent.glob("_*.py")):
        helpers.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return {
        "solution_sha": sha(exercise.solution),
        "checker_sha": sha(exercise.checker),
        "helpers_sha": helpers.hexdigest()[:16],
    }


@dataclass(frozen=True)
class Mutant:
    id: str  # "core/ReplaceBinaryOperator_Mul_Add:3" (operator and occurrence)
    line: int
    before: str  # the solution's line
    after: str  # the mutated line
    source: str  # the whole mutated solution


def mutants(source: str) -> Iterator[Mutant]:
    """Every single-operator mutant of `source` that still compiles and differs from it."""
    import cosmic_ray.plugins
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import MutationVisitor

    seen: set[str] = set()
    original = source.splitlines()
    for name in sorted(cosmic_ray.plugins.operator_names()):
        if not _wanted(name):
            continue
        operator_class = cosmic_ray.plugins.get_operator(name)
        if operator_class.arguments():
            continue
        operator = operator_class()
        count = sum(len(list(operator.mutation_positions(node))) for node in ast_nodes(get_ast(source)))
        for occurrence in range(count):
            mutated = MutationVisitor.mutate_code(source, operator, occurrence)
            if mutated is None or mutated == source or mutated in seen:
                continue
            seen.add(mutated)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # `is` with a literal, and the like
                    compile(mutated, "<mutant>", "exec", dont_inherit=True)
            except SyntaxError:
                continue
            changed = _changed_line(original, mutated.splitlines())
            if changed is None:
                continue
            line, before, after = changed
            if _in_docstring_or_comment(before):
                continue
            yield Mutant(f"{name}:{occurrence}", line, before.strip(), after.strip(), mutated)


def _changed_line(a: list[str], b: list[str]) -> tuple[int, str, str] | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1, x, y
    if len(a) != len(b):
        i = min(len(a), len(b))
        return i + 1, a[i] if i < len(a) else "", b[i] if i < len(b) else ""
    return None


def _in_docstring_or_comment(line: str) -> bool:
    text = line.strip()
    return text.startswith(("#", '"""', "'''"))


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # the verdict on the first seed
    reason: str
    killed_on_other_seed: bool = False  # survived the first seed, killed on another

    @property
    def killed(self) -> bool:
        return self.status in REJECTED


@dataclass
class Score:
    exercise: str
    outcomes: list[Outcome] = field(default_factory=list)
    equivalent: dict[str, str] = field(default_factory=dict)  # mutant id -> why

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.killed]

    @property
    def unexplained(self) -> list[Outcome]:
        return [o for o in self.survivors if o.mutant.id not in self.equivalent]

    @property
    def killed(self) -> int:
        return sum(o.killed for o in self.outcomes)

    @property
    def scored(self) -> int:
        """Mutants that count: all but the equivalent survivors."""
        return len(self.outcomes) - (len(self.survivors) - len(self.unexplained))

    @property
    def ratio(self) -> float:
        return self.killed / self.scored if self.scored else 1.0


Check = Callable[[Exercise, Path, int], tuple[str, str]]


def measure(
    exercise: Exercise,
    check: Check,
    equivalent: dict[str, str] | None = None,
    limit: int | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> Score:
    """Run every mutant of the exercise's solution through `check(exercise, path, seed)`
    (returns status and reason). A survivor is tried on the other pool seeds too: a verdict that
    changes with the seed is named as such."""
    seeds = seed_pool(exercise.id)
    source = exercise.solution.read_text(encoding="utf-8")
    score = Score(exercise.id, equivalent=dict(equivalent or {}))
    with tempfile.TemporaryDirectory(prefix="tutor-mutate-") as scratch:
        for i, m in enumerate(mutants(source)):
            if limit is not None and i >= limit:
                break
            path = Path(scratch) / f"m{i}" / exercise.solution.name
            path.parent.mkdir()
            path.write_text(m.source, encoding="utf-8")
            status, reason = check(exercise, path, seeds[0])
            outcome = Outcome(m, status, reason)
            if not outcome.killed:
                for s in seeds[1:]:
                    other, _why = check(exercise, path, s)
                    if other in REJECTED:
                        outcome.killed_on_other_seed = True
                        break
            score.outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
    return score


# -- the record --------------------------------------------------------------------------------


def record_path(exercise: Exercise) -> Path:
    return exercise.checker.parent.parent / RECORD


def read_record(chapter_dir: Path) -> dict[str, Any]:
    path = chapter_dir / RECORD
    if not path.exists():
        return {}
    data = _tomllib().loads(path.read_text(encoding="utf-8"))
    exercises = data.get("exercises", {})
    return exercises if isinstance(exercises, dict) else {}


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def write_record(chapter_dir: Path, entries: dict[str, dict[str, Any]]) -> None:
    """Write the chapter's record (every exercise's entry, sorted)."""
    lines = [
        "# Operator mutants of each reference solution and what survived the checker",
        "# (`tutor dev mutate EXERCISE --record`). A survivor is either a checker gap to close or",
        "# an equivalent mutant (`why` says why it behaves like the solution). Stale when the",
        "# solution, the checker or its helpers change: `tutor dev check` says so.",
        f"format_version = {FORMAT_VERSION}",
        "",
    ]
    for exercise_id in sorted(entries):
        e = entries[exercise_id]
        lines.append(f"[exercises.{_q(exercise_id)}]")
        for key in ("solution_sha", "checker_sha", "helpers_sha"):
            lines.append(f"{key} = {_q(e[key])}")
        for key in ("mutants", "killed", "equivalent_count"):
            lines.append(f"{key} = {int(e[key])}")
        lines.append("")
        for s in e.get("survivors", []):
            lines.append(f"[[exercises.{_q(exercise_id)}.survivors]]")
            lines.append(f"id = {_q(s['id'])}")
            lines.append(f"line = {int(s['line'])}")
            lines.append(f"before = {_q(s['before'])}")
            lines.append(f"after = {_q(s['after'])}")
            if s.get("why"):
                lines.append(f"why = {_q(s['why'])}")
            if s.get("seed_dependent"):
                lines.append("seed_dependent = true")
            lines.append("")
    (chapter_dir / RECORD).write_text("\n".join(lines), encoding="utf-8")


def entry_for(exercise: Exercise, score: Score) -> dict[str, Any]:
    return {
        **fingerprint(exercise),
        "mutants": len(score.outcomes),
        "killed": score.killed,
        "equivalent_count": len(score.survivors) - len(score.unexplained),
        "survivors": [
            {
                "id": o.mutant.id,
                "line": o.mutant.line,
                "before": o.mutant.before,
                "after": o.mutant.after,
                "why": score.equivalent.get(o.mutant.id, ""),
                "seed_dependent": o.killed_on_other_seed,
            }
            for o in score.survivors
        ],
    }


@dataclass(frozen=True)
class RecordStatus:
    exercise: str
    measured: bool
    stale: bool
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    unexplained: int = 0

    @property
    def ratio(self) -> float:
        scored = self.mutants - self.equivalent
        return self.killed / scored if scored else 1.0


def entry_status(exercise: Exercise, entry: Any) -> RecordStatus:
    """One exercise's record entry (None: never measured) against its files as they are now."""
    if not isinstance(entry, dict):
        return RecordStatus(exercise.id, measured=False, stale=False)
    stale = any(entry.get(k) != v for k, v in fingerprint(exercise).items())
    survivors = [s for s in entry.get("survivors", []) if isinstance(s, dict)]
    return RecordStatus(
        exercise.id,
        measured=True,
        stale=stale,
        mutants=int(entry.get("mutants", 0)),
        killed=int(entry.get("killed", 0)),
        equivalent=int(entry.get("equivalent_count", 0)),
        unexplained=sum(1 for s in survivors if not s.get("why")),
    )


def record_status(course: Course) -> list[RecordStatus]:
    """Every exercise's mutation record: measured or not, stale or not, its score."""
    out: list[RecordStatus] = []
    for chapter in course.chapters:
        record = read_record(chapter.directory)
        out += [entry_status(e, record.get(e.id)) for e in chapter.exercises]
    return out


# -- the command -------------------------------------------------------------------------------


def dev_mutate(
    console: Any,
    home: Path,
    exercise_id: str,
    *,
    record: bool = False,
    as_json: bool = False,
    limit: int | None = None,
    device: str = "auto",
) -> int:
    """`tutor dev mutate EXERCISE`: the score, the survivors; `--record` writes the chapter's
    record (keeping the `why` of survivors already explained)."""
    from tutor import paths
    from tutor.course import load_course
    from tutor.runner.client import Runner

    course = load_course()
    exercise = course.exercise(exercise_id)
    chapter = course.chapter_of(exercise)
    existing = read_record(chapter.directory)
    known = {
        str(s.get("id")): str(s.get("why"))
        for s in (existing.get(exercise.id, {}) or {}).get("survivors", [])
        if isinstance(s, dict) and s.get("why")
    }
    runner = Runner(cache_dir=paths.cache_dir(home), device=device)

    def check(e: Exercise, path: Path, seed: int) -> tuple[str, str]:
        v = runner.check(e, path, seed=seed)
        return v.status, v.reason

    def show(o: Outcome) -> None:
        if not as_json:
            mark = "killed" if o.killed else ("SEED-DEPENDENT" if o.killed_on_other_seed else "survived")
            after = o.mutant.after.split("  #")[0]
            console.print(
                f"{mark:>14}  {o.mutant.id}  line {o.mutant.line}: {after}",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )

    try:
        score = measure(exercise, check, equivalent=known, limit=limit, on_outcome=show)
    finally:
        runner.close()
    if record:
        existing[exercise.id] = entry_for(exercise, score)
        write_record(chapter.directory, existing)
    summary = {
        "exercise": exercise.id,
        "mutants": len(score.outcomes),
        "killed": score.killed,
        "equivalent": len(score.survivors) - len(score.unexplained),
        "score": round(score.ratio, 4),
        "survivors": [
            {"id": o.mutant.id, "line": o.mutant.line, "after": o.mutant.after, "why": known.get(o.mutant.id, "")}
            for o in score.survivors
        ],
        "seed_dependent": [o.mutant.id for o in score.outcomes if o.killed_on_other_seed],
    }
    if as_json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        console.print(
            f"{exercise.id}: {score.killed}/{score.scored} non-equivalent mutants killed ({score.ratio:.0%}); "
            f"{len(score.unexplained)} unexplained survivor(s)",
            markup=False,
        )
    return 0
