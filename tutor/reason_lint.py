"""Checker reasons that a learner reads in their own language: the static rules.

A checker writes every reason it composes through `ctx.t("English {field}", field=...)`; the
chapter's `i18n/<lang>.toml` `[reasons]` table maps that English template to the translation.
These rules (run by `tutor dev check`, no torch needed) find reasons written as a bare string
or f-string, English templates with no translation, translations nobody uses any more, and
translated mistakes whose words no translated reason contains (their hint would never show).
A figure's words are text the learner reads too: the `compares=`, `sides=` and `label=` of
`ctx.figure`/`time`/`memory`/`build` go through `ctx.t`, and a figure the checker names itself
carries a `label=` (its name is a key of history and `--json`, not a word in any language).
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass
from pathlib import Path

# The Context methods whose argument is text the learner reads: a failure reason, or the
# progress shown while the check runs ("compiling your block…"). Method -> argument index.
_REASON_ARGS = {"expect": 1, "fail": 0, "phase": 0, "build": 0, "load_learner": 0, "trials": 1}
# The figure calls, where their figure's name is (argument index, keyword), and the keywords
# whose text the learner reads beside the figure.
_FIGURE_NAME = {"figure": (0, "name"), "time": (None, "name"), "memory": (None, "name"), "build": (1, "figure")}
_FIGURE_WORDS = ("compares", "sides", "label")
# The default names, which the results panel shows in the learner's language itself.
_KNOWN_FIGURES = {"time", "memory", "build_s"}


@dataclass(frozen=True)
class Reason:
    file: Path
    line: int
    text: str


def _t_calls(source: str, file: Path) -> list[tuple[ast.Call, str]]:
    """Every `X.t("literal", ...)` call in a checker source with its template, in source order."""
    calls = []
    for node in ast.walk(ast.parse(source, str(file))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "t"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            calls.append((node, node.args[0].value))
    return sorted(calls, key=lambda call: call[0].lineno)


def translatable(source: str, file: Path) -> list[Reason]:
    """Every literal `X.t("...")` template in a checker source, in order."""
    return [Reason(file, node.lineno, template) for node, template in _t_calls(source, file)]


def missing_values(source: str, file: Path) -> list[Reason]:
    """`X.t("... {name} ...")` calls that pass no `name=` value: the text would fail to
    format at the moment a learner should read it."""
    out = []
    for node, template in _t_calls(source, file):
        if any(k.arg is None for k in node.keywords):
            continue  # **values: not knowable here
        given = {k.arg for k in node.keywords}
        fields = {name.split(".")[0].split("[")[0] for _, name, _, _ in _parse(template) if name}
        out += [Reason(file, node.lineno, name) for name in sorted(fields - given)]
    return out


def bare_reasons(source: str, file: Path) -> list[Reason]:
    """Reasons and progress texts passed to `ctx.expect`/`fail`/`phase`/`build`/`trials`/
    `load_learner` as a string or f-string, not through `ctx.t`: they would stay English in
    every language."""
    out = []
    for node in ast.walk(ast.parse(source, str(file))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        index = _REASON_ARGS.get(node.func.attr)
        if index is None or len(node.args) <= index:
            continue
        arg = node.args[index]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) or isinstance(arg, ast.JoinedStr):
            out.append(Reason(file, arg.lineno, ast.unparse(arg)[:80]))
    return sorted(out, key=lambda r: r.line)


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr)


def _figure_calls(source: str, file: Path) -> list[tuple[str, ast.Call]]:
    """(method, call) for every `X.figure/time/memory/build(...)` call in a checker source."""
    return [
        (node.func.attr, node)
        for node in ast.walk(ast.parse(source, str(file)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FIGURE_NAME
    ]


def bare_figure_words(source: str, file: Path) -> list[Reason]:
    """`compares=`, `sides=` (either of the two) and `label=` of a figure call written as a
    string or f-string, not through `ctx.t`, and the same words as keys of a dict that
    `ctx.figure` reports (`{"learner_bytes": ..., "compares": "..."}`): the learner would read
    them in English."""
    out = []
    for method, node in _figure_calls(source, file):
        words = [(k.arg, k.value) for k in node.keywords if k.arg in _FIGURE_WORDS]
        value = node.args[1] if method == "figure" and len(node.args) > 1 else None
        if isinstance(value, ast.Dict):
            words += [
                (key.value, v)
                for key, v in zip(value.keys, value.values)
                if isinstance(key, ast.Constant) and key.value in _FIGURE_WORDS
            ]
        for word, given in words:
            values = given.elts if isinstance(given, (ast.Tuple, ast.List)) else [given]
            out += [Reason(file, v.lineno, f"{word}={ast.unparse(v)[:80]}") for v in values if _is_text(v)]
    return sorted(out, key=lambda r: r.line)


def unlabelled_figures(source: str, file: Path) -> list[Reason]:
    """Figures a checker names itself (`ctx.figure(name, ...)`, `name=` of `ctx.time` and
    `ctx.memory`, `figure=` of `ctx.build`) with no `label=`: the learner would read the
    figure's key, in English, in every language."""
    out = []
    for method, node in _figure_calls(source, file):
        keywords = {k.arg: k.value for k in node.keywords}
        if None in keywords or "label" in keywords:
            continue  # **options: not knowable here
        index, keyword = _FIGURE_NAME[method]
        name = keywords.get(keyword)
        if name is None and index is not None and len(node.args) > index:
            name = node.args[index]
        if name is None or method == "figure" and len(node.args) + len(keywords) < 2:
            continue  # the default name, or not a checker's figure call (`plt.figure()`)
        if isinstance(name, ast.Constant) and name.value in _KNOWN_FIGURES:
            continue
        out.append(Reason(file, node.lineno, ast.unparse(name)[:80]))
    return sorted(out, key=lambda r: r.line)


def reason_problems(
    checker_files: list[Path], catalogues: dict[str, dict[str, str]], relative: Path
) -> tuple[list[str], set[str]]:
    """Problems with one chapter's reasons, and the English templates its checkers use:
    `checker_files` are its checks/*.py, `catalogues` its `[reasons]` table per translated
    language."""
    problems = []
    used: set[str] = set()
    for path in checker_files:
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(relative)
        for r in bare_reasons(source, path):
            problems.append(
                f"{where}:{r.line}: the text {r.text} is not written through ctx.t(...), so it cannot be translated"
            )
        for r in bare_figure_words(source, path):
            problems.append(
                f"{where}:{r.line}: the figure text {r.text} is not written through ctx.t(...), so it cannot be "
                "translated"
            )
        for r in unlabelled_figures(source, path):
            problems.append(
                f"{where}:{r.line}: the figure {r.text} has no label=ctx.t(...), so the learner reads its name, "
                "untranslated"
            )
        for r in missing_values(source, path):
            problems.append(f"{where}:{r.line}: ctx.t(...) uses {{{r.text}}} but passes no {r.text}= value")
        for r in translatable(source, path):
            used.add(r.text)
            for lang, table in sorted(catalogues.items()):
                if r.text not in table:
                    problems.append(f"{where}:{r.line}: reason not translated to {lang}: {r.text[:80]!r}")
    for lang, table in sorted(catalogues.items()):
        for english in table:
            if english not in used:
                problems.append(
                    f"{checker_files[0].parent.parent.relative_to(relative)}/i18n/{lang}.toml: "
                    f"[reasons] {english[:60]!r} is used by no checker; remove it"
                )
    return problems, used


def literal_parts(template: str) -> list[str]:
    """The text of a format template between its {fields}: the words a reason always shows."""
    parts = []
    for literal, *_ in _parse(template):
        if literal.strip():
            parts.append(literal)
    return parts


def _parse(template: str) -> list[tuple[str, str | None, str | None, str | None]]:
    try:
        return list(string.Formatter().parse(template))
    except ValueError:
        return [(template, None, None, None)]


def mistake_reachable(when: str, templates: list[str]) -> bool:
    """A translated mistake's `when` words can appear in a translated reason: they lie inside
    the fixed text of one of the templates (the values between fields are unknown here)."""
    folded = when.casefold()
    return any(folded in part.casefold() for t in templates for part in literal_parts(t))
