"""Shared by this chapter's checkers: build the learner's extension and explain build failures.

The learner's module calls `load_inline` when it is imported, so importing it *is* the build.
When the compiler rejects their code, `load_inline` raises a RuntimeError whose message holds
the whole ninja/compiler log, with line numbers of the generated `main.cpp` / `cuda.cu`. This
module finds the first error, maps its line back to the learner's own .py file (the source
strings are copied into those files verbatim) and fails the check with that line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

# g++/clang: /path/main.cpp:12:5: error: 'foo' was not declared in this scope
_GCC_ERROR = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$",
                        re.MULTILINE)
# nvcc: /path/cuda.cu(12): error: identifier "foo" is undefined
_NVCC_ERROR = re.compile(r"^(?P<file>[^\s(][^(\n]*?)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<msg>.*)$",
                         re.MULTILINE)
# gcc's instantiation notes: /path/main.cpp:12:30:   required from here
_REQUIRED_FROM = re.compile(r"^(?P<file>[^\s:][^:\n]*?(?:main\.cpp|cuda\.cu)):(?P<line>\d+):(?:\d+:)?\s+required from",
                            re.MULTILINE)
# gcc's excerpt of the offending line:    18 |     o[i] = in[i]
_EXCERPT_LINE = re.compile(r"^\s*(\d+) \|")
_SOURCES = ("main.cpp", "cuda.cu")


def load_learner(ctx: Any, phase: str | None = None) -> ModuleType:
    """Import (= build) the learner's module, timed as `build_s`; a build error fails the check
    with the first compiler error, located in the learner's file. Every reason goes through
    `ctx.t`, so the chapter's `[reasons]` table translates it."""
    try:
        return ctx.load_learner(phase or ctx.t("building your C++ extension…"))
    except RuntimeError as exc:
        text = str(exc)
        if "Error building extension" not in text:
            raise
        _print_log(ctx, text)
        reason, details = explain_build_error(ctx, text, ctx.learner_path)
        ctx.fail(reason, details)
    except ImportError as exc:
        text = str(exc)
        if "undefined symbol" not in text:
            raise
        symbol = text.rsplit("undefined symbol:", 1)[1].strip()
        ctx.fail(ctx.t("your extension compiled but does not load: `{symbol}` is used but never defined "
                       "(is the definition's name or parameter list different from its declaration?)",
                       symbol=_demangle(symbol)),
                 [text.splitlines()[0]])
    raise AssertionError("unreachable")  # pragma: no cover - ctx.fail raises


def explain_build_error(ctx: Any, log: str, learner_path: Path | None) -> tuple[str, list[str]]:
    """(reason, details) for a failed build log, pointing at the learner's line where possible."""
    errors = sorted([m for m in _GCC_ERROR.finditer(log)] + [m for m in _NVCC_ERROR.finditer(log)],
                    key=lambda m: m.start())
    if not errors:
        tail = [line for line in log.splitlines() if line.strip()][-6:]
        return (ctx.t("your extension did not build (the compiler output is in the output panel)"), tail)
    first = errors[0]
    message = first.group("msg").strip()
    file, line = first.group("file"), int(first.group("line"))
    if Path(file).name not in _SOURCES:
        # The error is inside a torch header, triggered by the learner's code: use the nearest
        # "required from" note that points into the generated sources.
        notes = list(_REQUIRED_FROM.finditer(log, 0, first.start())) or list(_REQUIRED_FROM.finditer(log))
        if notes:
            file, line = notes[-1].group("file"), int(notes[-1].group("line"))
    where, source_line, offset = _locate(ctx, Path(file), line, learner_path)
    more = len(errors) - 1
    excerpt = _context_after(log, first.end(), offset)
    details = [] if excerpt or source_line is None else [f"    {source_line.strip()}"]
    details += excerpt
    if more:
        details.append(ctx.t("({more} more error(s) after this one; fix the first one first: later errors are "
                             "often caused by it. The full log is in the output panel.)", more=more))
    return (ctx.t("your code does not compile: {where}: error: {message}", where=where, message=message), details)


def _locate(ctx: Any, generated: Path, line: int, learner_path: Path | None) -> tuple[str, str | None, int]:
    """Where a line of the generated main.cpp/cuda.cu is in the learner's .py file, its text, and
    the offset from generated to learner line numbers (0 when it could not be mapped)."""
    try:
        gen_lines = generated.read_text(encoding="utf-8", errors="replace").splitlines()
        text = gen_lines[line - 1]
    except (OSError, IndexError):
        return (ctx.t("{file} line {line}", file=generated.name, line=line), None, 0)
    if "m.def(" in text or "PYBIND11_MODULE" in text:
        return (ctx.t("in the Python bindings load_inline generated for `functions=[...]` (is every name in "
                      "functions= a C++ function defined with exactly that name?)"), text, 0)
    if learner_path is None:
        return (ctx.t("{file} line {line}", file=generated.name, line=line), text, 0)
    try:
        mine = learner_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return (ctx.t("{file} line {line}", file=generated.name, line=line), text, 0)
    target = text.rstrip()
    candidates = [i for i, t in enumerate(mine) if t.rstrip() == target]
    if not candidates or not target.strip():
        return (ctx.t("line {line} of the {language} source", line=line,
                      language="CUDA" if generated.suffix == ".cu" else "C++"), text, 0)

    def score(i: int) -> int:  # how many neighbouring lines agree too
        n = 0
        for k in range(-6, 7):
            g, m = line - 1 + k, i + k
            if 0 <= g < len(gen_lines) and 0 <= m < len(mine) and gen_lines[g].rstrip() == mine[m].rstrip():
                n += 1
        return n

    best = max(candidates, key=score)
    return (ctx.t("line {line} of your file", line=best + 1), text, best + 1 - line)


def _context_after(log: str, pos: int, offset: int, limit: int = 6) -> list[str]:
    """The compiler's own excerpt after the first error (source line and caret), trimmed, with
    gcc's `  18 | code` line numbers shifted to the learner's file."""
    out = []
    for raw in log[pos:].splitlines()[1:]:
        if _GCC_ERROR.match(raw) or _NVCC_ERROR.match(raw) or raw.startswith(("ninja:", "[", "FAILED")) \
                or " note: " in raw or "In function" in raw:
            break
        if not raw.strip():
            continue
        numbered = _EXCERPT_LINE.match(raw)
        if numbered and offset:
            width = len(numbered.group(1))
            raw = raw[:numbered.start(1)] + f"{int(numbered.group(1)) + offset:>{width}}" + raw[numbered.end(1):]
        out.append(raw.rstrip())
        if len(out) >= limit:
            break
    return out


def _print_log(ctx: Any, log: str) -> None:
    """Put the compiler's messages (without the long command lines) in the output panel."""
    keep = [line for line in log.splitlines()
            if not line.lstrip().startswith(("c++ ", "g++ ", "/usr/bin/c++", "nvcc ", "/usr/local/cuda"))
            and "-DTORCH_EXTENSION_NAME" not in line]
    print(ctx.t("Your extension did not build. The compiler said (main.cpp is your C++ source string as "
                "load_inline saved it, cuda.cu your CUDA one; the check's reason gives the line in your own file):")
          + "\n" + "\n".join(keep), file=sys.stdout, flush=True)


def _demangle(symbol: str) -> str:
    tool = shutil.which("c++filt")
    if not tool:
        return symbol
    try:
        return subprocess.run([tool, symbol], capture_output=True, text=True, timeout=5).stdout.strip() or symbol
    except (OSError, subprocess.SubprocessError):
        return symbol
