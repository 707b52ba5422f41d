"""Faster `load_inline` rebuilds: the learner's own `#include` lines parsed once, the bindings apart.

Where a chapter 3 build's time goes (bench/bench_cpp_build.py, gcc 12, -O2): compiling a
`main.cpp` that includes `<ATen/ATen.h>` and `<torch/csrc/Exceptions.h>` costs about 22 s of
CPU, of which about 20 s is parsing those two headers (ATen and pybind11 about half each), about
2 s the learner's code and the generated bindings, 0.4 s linking. Every edit of the C++ source
changes `main.cpp`, the one file of the extension, so every edit paid the 20 s again.

torch's own `load_inline(..., use_pch=True)` does not help here: it precompiles
`torch/extension.h` into torch's install folder, which is used only when that header is the
first line of `main.cpp` (not with `no_implicit_headers=True` and the narrow headers this
course teaches), and every `load_inline` call without `use_pch=True` deletes it again.

So this module precompiles what the learner's `main.cpp` itself starts with: the run of
`#include <...>` lines before its first line of code, in their order. Compiled with
`-include prelude.h` (those same lines) the file means what it meant: the same headers, in the
same order, before any of the learner's code, and their own `#include` lines then find the
include guards set. gcc falls back to the plain header when the `.gch` does not fit the
command line, so a stale or foreign one costs time, never correctness. One precompiled header
serves every extension and exercise with the same include lines and compiler flags (the
reference solutions' among them), kept under the extensions folder between checks.

Precompiled, ATen costs about 2 s of CPU per file instead of 10; pybind11 still costs about
7 s (gcc generates code for much of it in every file that includes it). So when the source
leaves pybind11 (`torch/csrc/Exceptions.h`) to the lines after its code, as the course's
exercises do, `split_bindings` compiles the bindings `load_inline` generates in a file of their
own, under a fixed module name, and an edit of the code recompiles the code alone.

When ccache is on PATH, torch already puts it in front of the compiler; the flags and the
sloppiness set here let ccache cache builds that use the precompiled header (it refuses
them otherwise).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

KEEP = 4  # precompiled headers kept (about 450 MiB each for ATen + pybind11); older ones are removed
RETRY_S = 600.0  # a header that failed to build is not tried again for this long
BUDGET_S = 60.0  # the most a build waits for its header (about 25 s of CPU for ATen): checks time out at 150 s
_INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>\n]+>\s*(//.*)?$")
_NAME_DEFINE = re.compile(r"\s-DTORCH_EXTENSION_NAME=\S+")
_WRAPPERS = ("ccache", "sccache")
# ccache refuses builds that use a precompiled header unless told these differences are fine
CCACHE_SLOPPINESS = "pch_defines,time_macros,include_file_mtime,include_file_ctime"


def leading_includes(source: str) -> str:
    """The `#include <...>` lines `source` starts with (blank and `//` lines between them
    allowed), up to its first other line; "" when it starts with something else. A quoted
    include stops the run: it is found relative to the including file's own folder."""
    kept: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if not _INCLUDE.match(line):
            break
        kept.append(stripped)
    return "\n".join(kept) + "\n" if kept else ""


def _ninja_vars(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.isidentifier():
            out[name] = value
    return out


def _main_source(text: str) -> Path | None:
    for line in text.splitlines():
        m = re.match(r"^build \S+\.o: compile (\S+\.cpp)$", line)
        if m:
            return Path(m.group(1))
    return None


def _plain_compiler(cxx: str) -> list[str]:
    """The compiler command without a ccache/sccache in front (the header is built once)."""
    words = shlex.split(cxx)
    while len(words) > 1 and Path(words[0]).name in _WRAPPERS:
        words = words[1:]
    return words


def _identity(words: list[str]) -> str:
    """What identifies the compiler and torch's headers: a new gcc or torch gets a new header."""
    parts = [" ".join(words)]
    exe = shutil.which(words[0]) if words else None
    for path in (exe, _torch_include()):
        if path is None:
            continue
        with contextlib.suppress(OSError):
            st = os.stat(os.path.realpath(path))
            parts.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
    return "\n".join(parts)


def _torch_include() -> str:
    import torch

    return os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "ATen.h")


def _prune(root: Path, spare: Path, keep: int = KEEP) -> None:
    """Remove all but the `keep` most recently used headers (each folder's `used` stamp),
    never `spare` (the one just built)."""
    folders = [p for p in root.iterdir() if p.is_dir() and p != spare and p.name != "objects"] if root.is_dir() else []

    def used(p: Path) -> float:
        try:
            return (p / "used").stat().st_mtime
        except OSError:
            return 0.0

    for old in sorted(folders, key=used, reverse=True)[keep - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def _recent(path: Path) -> bool:
    """A failure marker younger than RETRY_S: broken include lines fail fast, but a header
    killed for memory or time should not be retried on every build."""
    try:
        return time.time() - path.stat().st_mtime < RETRY_S
    except OSError:
        return False


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[bool]:
    """torch's FileBaton (build_locks.py makes a dead holder's lock removable): True for the one
    process that builds, False for those that waited for it."""
    from torch.utils.file_baton import FileBaton

    baton = FileBaton(str(lock))
    if baton.try_acquire():
        try:
            yield True
        finally:
            baton.release()
    else:
        baton.wait()
        yield False


def _build_header(compiler: list[str], flags: str, prelude: str, folder: Path) -> None:
    """Precompile `prelude` into folder/prelude.h.gch, within BUDGET_S. A run that ends while
    this is under way (a timeout, a failed check) kills it, and the next build would start over
    and could meet the same fate on a busy machine: so a leftover of a killed attempt, a
    failure or an attempt over the budget leave a `failed` marker, and builds go without the
    header (as torch writes them) until RETRY_S has passed."""
    header, failed = folder / "prelude.h", folder / "failed"
    leftovers = list(folder.glob("prelude.h.gch.*"))
    for old in leftovers:
        old.unlink(missing_ok=True)
    if leftovers:
        failed.write_text("an earlier attempt was stopped before it finished\n")
        return
    header.write_text(prelude)
    partial = folder / f"prelude.h.gch.{os.getpid()}"
    command = [*compiler, *shlex.split(flags), "-x", "c++-header", str(header), "-o", str(partial)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUDGET_S)
        ok, log = done.returncode == 0, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        ok, log = False, f"took longer than {BUDGET_S:.0f} s\n"
    if ok:
        os.replace(partial, folder / "prelude.h.gch")
    else:
        partial.unlink(missing_ok=True)
        failed.write_text(log)


def header_for(build_directory: str, root: Path) -> Path | None:
    """The prelude header (with its `.gch` beside it) for the extension in `build_directory`,
    built if need be; None when its `main.cpp` starts with no `#include <...>` or the header
    does not compile (the build then runs as it would have, and reports the learner's error)."""
    ninja = Path(build_directory) / "build.ninja"
    try:
        text = ninja.read_text()
        spec = _ninja_vars(text)
        main = _main_source(text)
        prelude = leading_includes(main.read_text(errors="replace")) if main else ""
    except OSError:
        return None
    if not prelude or "cxx" not in spec or "cflags" not in spec:
        return None
    compiler = _plain_compiler(spec["cxx"])
    flags = _NAME_DEFINE.sub("", " " + spec["cflags"]).strip()
    key = hashlib.sha256("\n".join([_identity(compiler), flags, prelude]).encode()).hexdigest()[:20]
    folder = root / key
    header, pch, failed = folder / "prelude.h", folder / "prelude.h.gch", folder / "failed"
    if not pch.exists() and not _recent(failed):
        folder.mkdir(parents=True, exist_ok=True)
        with _locked(folder / "lock") as builder:
            if builder and not pch.exists():
                _build_header(compiler, flags, prelude, folder)
        if pch.exists():
            (folder / "used").touch()
            _prune(root, spare=folder)
    if not pch.exists():
        return None
    with contextlib.suppress(OSError):
        (folder / "used").touch()
    return header


_MODULE = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"
_BOUND = re.compile(r'^m\.def\("[^"]*", (?:torch::wrap_pybind_function\()?([A-Za-z_]\w*)\b', re.MULTILINE)
_FIXED = "tutor_split_bindings"
_INIT = f"""#include <Python.h>
#define TUTOR_CAT2(a, b) a##b
#define TUTOR_CAT(a, b) TUTOR_CAT2(a, b)
extern "C" PyObject* PyInit_{_FIXED}();
extern "C" __attribute__((visibility("default"))) PyObject* TUTOR_CAT(PyInit_, TORCH_EXTENSION_NAME)() {{
    return PyInit_{_FIXED}();
}}
"""
_NOT_EXTERNAL = re.compile(r"\b(static|inline|constexpr|consteval|template|namespace|struct|class|union|enum)\b")


def _masked(code: str) -> str:
    """`code` with comments and string/char literals blanked (same length, newlines kept), so
    that braces and semicolons in them do not count."""
    out = list(code)
    i, n = 0, len(code)
    while i < n:
        two = code[i : i + 2]
        if two == "//":
            j = code.find("\n", i)
            j = n if j < 0 else j
        elif two == "/*":
            j = code.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif code[i] in "\"'":
            quote, j = code[i], i + 1
            while j < n and code[j] != quote and code[j] != "\n":
                j += 2 if code[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def declaration(code: str, name: str) -> str | None:
    """A declaration of the function `name` that `code` defines once at file scope, from its
    definition's text up to the body; None when it is not one plain external function there
    (overloaded, static, inline, a template, in a namespace, a deduced return type)."""
    masked = _masked(code)
    found: list[str] = []
    depth, head = 0, 0
    for i, c in enumerate(masked):
        if depth == 0 and c == "\n" and masked[head:i].lstrip().startswith("#"):
            head = i + 1  # a preprocessor line ends a head
        elif c == "{":
            if depth == 0:
                text = masked[head:i]
                if re.search(rf"\b{re.escape(name)}\s*\(", text) and (text.rstrip().endswith(")") or "->" in text):
                    # from the first token: a comment above the function (an edit, often) stays out,
                    # so that the bindings file, and its object, do not change with it
                    start = head + len(text) - len(text.lstrip())
                    found.append(code[start:i])
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                head = i + 1
        elif c == ";" and depth == 0:
            head = i + 1
    if len(found) != 1:
        return None
    decl = found[0].strip()
    bare = _masked(decl)
    if (
        _NOT_EXTERNAL.search(bare)
        or "=" in bare.split("(", 1)[0]
        or (re.match(r"\s*auto\b", bare) and "->" not in bare)
    ):
        return None
    return decl + "\n;"


def split_bindings(build_directory: str) -> bool:
    """Compile the pybind11 bindings `load_inline` generates for `functions=[...]` in a file of
    their own, when the learner's source leaves the headers they need (pybind11, through
    `torch/csrc/Exceptions.h`) to the lines after its code: those headers cost about 7 s of
    CPU in every file that includes them, precompiled or not. An edit of the code then
    recompiles only the code (its line numbers unchanged, in `split/main.cpp`); the bindings
    file changes only with the functions' signatures. False (build as torch wrote it) when
    the source is not laid out so, or a bound function has no plain declaration."""
    build = Path(build_directory)
    ninja = build / "build.ninja"
    text = ninja.read_text()
    main = _main_source(text)
    if main is None or main.parent != build:
        return False
    lines = main.read_text(errors="replace").split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(_MODULE)]
    if len(starts) != 1:
        return False
    at = start = starts[0]
    while at > 0 and (not lines[at - 1].strip() or _INCLUDE.match(lines[at - 1])):
        at -= 1
    trailing = [line for line in lines[at:start] if line.strip()]
    if not trailing:
        return False  # the code includes pybind11 itself: nothing to gain
    code = "\n".join(lines[:at]) + "\n"
    module = "\n".join(lines[start:])
    names = _BOUND.findall(module)
    decls = [declaration(code, name) for name in names]
    if not names or any(d is None for d in decls):
        return False
    # A fixed module name: load_inline renames the extension (name_v1, name_v2, ...) at every
    # change of its source, and a bindings file under the new name would be rebuilt each time.
    # init.cpp gives the library the entry point Python looks for under the name of the day.
    module = module.replace(_MODULE, _MODULE.replace("TORCH_EXTENSION_NAME", _FIXED), 1)
    bindings = leading_includes(code) + "\n".join(trailing) + "\n" + "\n".join(decls) + "\n" + module + "\n"  # type: ignore[arg-type]
    compile_line = f"build main.o: compile {main}"
    links = [line for line in text.splitlines() if re.match(r"^build \S+: link main\.o$", line)]
    if compile_line not in text.splitlines() or len(links) != 1:
        return False
    split = build / "split"
    split.mkdir(exist_ok=True)
    for path, content in ((split / "main.cpp", code), (split / "bindings.cpp", bindings), (split / "init.cpp", _INIT)):
        try:
            same = path.read_text() == content
        except OSError:
            same = False
        if not same:  # an unchanged file keeps its time: ninja does not rebuild it
            path.write_text(content)
    cflags = _ninja_vars(text).get("cflags", "")
    text = text.replace(
        compile_line,
        f"build main.o: compile {split / 'main.cpp'}\n"
        f"build bindings.o: compile {split / 'bindings.cpp'}\n"
        f"  cflags = {_NAME_DEFINE.sub('', ' ' + cflags).strip()}\n"
        f"build init.o: compile {split / 'init.cpp'}\n"
        f"  cflags = $cflags_{_FIXED}",  # no prelude: init.cpp needs Python.h alone
    )
    text = f"cflags_{_FIXED} = {cflags}\n" + text
    text = text.replace(links[0], links[0] + " bindings.o init.o")
    ninja.write_text(text)
    return True


def share_bindings(build_directory: str, root: Path) -> None:
    """Link the bindings object that every extension with the same bindings file and flags
    shares (the learner's file, the reference solution, a check's mutants: one per function
    signature), compiled once into `root/objects`; when it does not compile, ninja compiles
    it as written and reports the error."""
    build = Path(build_directory)
    ninja = build / "build.ninja"
    text = ninja.read_text()
    edge = re.search(r"^build bindings\.o: compile (\S+)\n  cflags = (.*)\n", text, re.MULTILINE)
    if edge is None or "cxx" not in _ninja_vars(text):
        return
    source, flags = Path(edge.group(1)), edge.group(2)
    compiler = _plain_compiler(_ninja_vars(text)["cxx"])
    key = hashlib.sha256("\n".join([_identity(compiler), flags, source.read_text()]).encode()).hexdigest()[:20]
    obj = root / "objects" / f"bindings-{key}.o"
    if not obj.exists():
        obj.parent.mkdir(parents=True, exist_ok=True)
        with _locked(obj.parent / f"{key}.lock") as builder:
            if builder and not obj.exists():
                partial = obj.parent / f"{key}.{os.getpid()}.o"
                command = [*compiler, *shlex.split(flags), "-c", str(source), "-o", str(partial)]
                if subprocess.run(command, capture_output=True).returncode == 0:
                    os.replace(partial, obj)
                else:
                    partial.unlink(missing_ok=True)
    if not obj.exists():
        return
    text = text.replace(edge.group(0), "")
    text = re.sub(r"^(build \S+: link main\.o) bindings\.o( init\.o)$", rf"\1 {obj}\2", text, flags=re.MULTILINE)
    ninja.write_text(text)


def with_prelude(text: str, header: Path, ccache: bool) -> str:
    """build.ninja's text with the prelude forced in front of every C++ source (the file's
    flags and the bindings' own)."""
    extra = f" -include {shlex.quote(str(header))}"
    if ccache:
        extra += " -fpch-preprocess"  # ccache caches PCH builds only with this flag
    return re.sub(r"^(\s*cflags = (?!\$).*)$", lambda m: m.group(1) + extra, text, flags=re.MULTILINE)


def patch(cpp_extension: types.ModuleType) -> None:
    """Wrap torch's ninja step so each build first gets its prelude header (subject.py calls
    this when a run imports torch.utils.cpp_extension; TUTOR_NO_PCH=1 turns it off)."""
    if os.environ.get("TUTOR_NO_PCH") or getattr(cpp_extension, "_run_ninja_build", None) is None:
        return
    if getattr(cpp_extension._run_ninja_build, "tutor_prelude", False):
        return
    original: Callable[..., Any] = cpp_extension._run_ninja_build

    def run_ninja_build(build_directory: str, verbose: bool, error_prefix: str) -> None:
        root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or cpp_extension.get_default_build_root()) / "tutor_pch"
        try:
            split_bindings(build_directory)
            header = header_for(build_directory, root)
            if header is not None:
                ninja = Path(build_directory) / "build.ninja"
                text = ninja.read_text()
                ccache = Path(shlex.split(_ninja_vars(text).get("cxx", "c++"))[0]).name in _WRAPPERS
                ninja.write_text(with_prelude(text, header, ccache))
            share_bindings(build_directory, root)
        except (OSError, ValueError):
            pass  # no header: the build runs as torch wrote it
        original(build_directory, verbose, error_prefix)

    run_ninja_build.tutor_prelude = True  # type: ignore[attr-defined]
    cpp_extension._run_ninja_build = run_ninja_build  # type: ignore[attr-defined]
