"""Edit-to-verdict time of a C++ exercise (issue 28's first row), and where a build's time goes.

    python bench/bench_cpp_build.py [--exercise cpp-relu] [--edits 3] [--busy 0 2] [--no-pch-too]
    python bench/bench_cpp_build.py --breakdown
    python bench/bench_cpp_build.py --direct [--edits 2] [--no-pch-too]

The verdicts run through a warm `Runner` (as in the app), with a fresh cache folder, on a copy
of the reference solution with its own extension name (a learner's file):

- first build: the first check (the learner's extension and its precompiled header are built;
  the reference's extension too, in parallel);
- C++ edit: a new comment line in the C++ source each time (main.cpp changes: a full compile);
- Python-only edit: a new comment line in the Python part (the extension is loaded as built).

`--direct` times the builds alone, in one plain process, as CPU seconds of the compiler (what
a shared machine leaves steady) and wall seconds. `--busy N` starts N spinning processes first
(issue 28: "idle and with two busy loops");
`--no-pch-too` repeats every row with TUTOR_NO_PCH=1 (torch's build as it comes), so the ratio
is measured in the same run. `--breakdown` compiles the reference's generated main.cpp by hand
and reports CPU seconds (user+sys of the compiler, steadier than wall time on a shared machine)
for: the headers alone, the whole file, the link, the precompiled header, and the whole file and
an empty file with it; and, where the source leaves pybind11 to the lines after its code, its
code and the generated bindings compiled apart (as the checks build them).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.course import load_course  # noqa: E402
from tutor.runner.client import Runner  # noqa: E402


def _spin() -> None:
    while True:
        pass


def _learner_copy(solution: str, ext: str) -> str:
    source, n = re.subn(r'name="(tutor_ch03_[a-z_]+?)_ref"', rf'name="\1_{ext}"', solution)
    assert n == 1, "the solution names no tutor_ch03_*_ref extension"
    return source


def _cpp_edit(source: str, k: int) -> str:
    """A comment line after the C++ source's first line that is not an #include."""
    start = source.index('r"""') + 4
    end = source.index('"""', start)
    lines = source[start:end].split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#"))
    lines.insert(at, f"// edit {k}")
    return source[:start] + "\n".join(lines) + source[end:]


def _py_edit(source: str, k: int) -> str:
    return source + f"\n# python edit {k}\n"


def verdicts(exercise_id: str, edits: int, busy: int, pch: bool) -> dict[str, list[float]]:
    exercise = load_course().exercise(exercise_id)
    solution = Path(exercise.solution).read_text()
    work = Path(tempfile.mkdtemp(prefix="bench-cpp-"))
    learner = work / Path(exercise.solution).name
    source = _learner_copy(solution, "bench")
    learner.write_text(source)
    saved = os.environ.get("TUTOR_NO_PCH")
    if not pch:
        os.environ["TUTOR_NO_PCH"] = "1"
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    rows: dict[str, list[float]] = {"first build": [], "C++ edit": [], "Python-only edit": []}
    try:
        with Runner(cache_dir=work / "cache", device="cpu") as runner:
            runner.start()

            def timed(row: str) -> None:
                start = time.perf_counter()
                v = runner.check(exercise, learner)
                rows[row].append(time.perf_counter() - start)
                assert v.status == "passed", f"{row}: {v.status}: {v.reason}"

            timed("first build")
            for k in range(edits):
                learner.write_text(_cpp_edit(source, k))
                timed("C++ edit")
            for k in range(edits):
                learner.write_text(_py_edit(_cpp_edit(source, edits - 1), k))
                timed("Python-only edit")
    finally:
        for p in spinners:
            p.terminate()
        if saved is None:
            os.environ.pop("TUTOR_NO_PCH", None)
        else:
            os.environ["TUTOR_NO_PCH"] = saved
        shutil.rmtree(work, ignore_errors=True)
    return rows


def _cpu(command: list[str]) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds) for one compiler command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def breakdown(exercise_id: str) -> None:
    from tutor.runner import prelude_pch

    exercise = load_course().exercise(exercise_id)
    work = Path(tempfile.mkdtemp(prefix="bench-cpp-parts-"))
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(work / "ext"), "TUTOR_NO_PCH": "1"}
    subprocess.run([sys.executable, exercise.solution], check=True, env=env, capture_output=True)
    build = next((work / "ext").glob("*/build.ninja")).parent
    spec = prelude_pch._ninja_vars((build / "build.ninja").read_text())
    cxx = prelude_pch._plain_compiler(spec["cxx"])
    flags = shlex.split(spec["cflags"])
    ldflags = shlex.split(spec["ldflags"])
    main = build / "main.cpp"
    prelude = prelude_pch.leading_includes(main.read_text())
    (work / "headers.cpp").write_text(prelude)
    (work / "empty.cpp").write_text("\n")
    (work / "prelude.h").write_text(prelude)
    o = str(work / "x.o")
    parts = [
        ("the include lines alone", [*cxx, *flags, "-c", str(work / "headers.cpp"), "-o", o]),
        ("the whole main.cpp", [*cxx, *flags, "-c", str(main), "-o", o]),
        ("linking", [*cxx, o, *ldflags, "-o", str(work / "x.so")]),
        ("precompiling the include lines", [*cxx, *flags, "-x", "c++-header", str(work / "prelude.h")]),
        (
            "an empty file, with the header",
            [*cxx, *flags, "-include", str(work / "prelude.h"), "-c", str(work / "empty.cpp"), "-o", str(work / "e.o")],
        ),
        (
            "the whole main.cpp, with the header",
            [*cxx, *flags, "-include", str(work / "prelude.h"), "-c", str(main), "-o", o],
        ),
    ]
    if prelude_pch.split_bindings(str(build)):  # the layout the checks build: code and bindings apart
        for what, name in (
            ("your code alone, with the header", "main.cpp"),
            ("the bindings alone, with the header", "bindings.cpp"),
        ):
            parts.append(
                (what, [*cxx, *flags, "-include", str(work / "prelude.h"), "-c", str(build / "split" / name), "-o", o])
            )
    print(f"{exercise_id}: compiler {' '.join(cxx)}; include lines: {prelude.strip().splitlines()}")
    for what, command in parts:
        cpu, wall = _cpu(command)
        print(f"  {what:<38} {cpu:6.1f} s CPU  {wall:6.1f} s wall")
    size = (work / "prelude.h.gch").stat().st_size / 2**20
    print(f"  precompiled header: {size:.0f} MiB")
    shutil.rmtree(work, ignore_errors=True)


_DIRECT = r"""
import os, resource, runpy, sys, time
from pathlib import Path
from torch.utils import cpp_extension
from tutor.runner import batons, prelude_pch
batons.install()
if not os.environ.get("TUTOR_NO_PCH"):
    prelude_pch.patch(cpp_extension)
for label, path in zip(sys.argv[1::2], sys.argv[2::2]):
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    runpy.run_path(path)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(f"{label}\t{cpu:.1f}\t{time.perf_counter() - start:.1f}", flush=True)
"""


def direct(exercise_id: str, edits: int, pch: bool) -> None:
    """The builds alone, in one plain process (no runner, no check): CPU seconds of the compiler
    and linker (steady on a shared machine) and wall seconds, for a first build, C++ edits and
    a Python-only edit of a copy of the reference solution."""
    exercise = load_course().exercise(exercise_id)
    work = Path(tempfile.mkdtemp(prefix="bench-cpp-direct-"))
    source = _learner_copy(Path(exercise.solution).read_text(), "bench")
    files = [("first build", source)]
    files += [(f"C++ edit {k + 1}", _cpp_edit(source, k)) for k in range(edits)]
    files += [("Python-only edit", _py_edit(_cpp_edit(source, edits - 1), 0))]
    args = []
    for i, (label, text) in enumerate(files):
        path = work / f"step{i}.py"
        path.write_text(text)
        args += [label, str(path)]
    env = {
        **os.environ,
        "TORCH_EXTENSIONS_DIR": str(work / "ext"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    env.pop("TUTOR_NO_PCH", None)
    if not pch:
        env["TUTOR_NO_PCH"] = "1"
    done = subprocess.run([sys.executable, "-c", _DIRECT, *args], env=env, capture_output=True, text=True, check=True)
    tag = "runner's build hook" if pch else "TUTOR_NO_PCH=1"
    for line in done.stdout.splitlines():
        label, cpu, wall = line.split("\t")
        print(f"  {tag:<20} {label:<17} {float(cpu):6.1f} s CPU  {float(wall):6.1f} s wall")
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exercise", default="cpp-relu")
    ap.add_argument("--edits", type=int, default=3, help="C++ edits and Python-only edits measured")
    ap.add_argument("--busy", type=int, nargs="+", default=[0, 2], help="spinning processes, one pass per value")
    ap.add_argument("--no-pch-too", action="store_true", help="every pass again with TUTOR_NO_PCH=1")
    ap.add_argument("--breakdown", action="store_true", help="where one build's CPU time goes, then stop")
    ap.add_argument("--direct", action="store_true", help="the builds alone, CPU and wall seconds, then stop")
    args = ap.parse_args()
    if args.direct:
        print(f"{args.exercise}: load_inline builds in one process, cores {os.cpu_count()}")
        for pch in (True, False) if args.no_pch_too else (True,):
            direct(args.exercise, args.edits, pch)
        return
    if args.breakdown:
        breakdown(args.exercise)
        return
    print(
        f"{args.exercise}: seconds from Runner.check to its verdict (warm runner, fresh cache), cores {os.cpu_count()}"
    )
    for busy in args.busy:
        for pch in (True, False) if args.no_pch_too else (True,):
            rows = verdicts(args.exercise, args.edits, busy, pch)
            tag = f"busy loops {busy}, {'prelude header' if pch else 'TUTOR_NO_PCH=1'}"
            for row, times in rows.items():
                shown = ", ".join(f"{t:.1f}" for t in times)
                print(f"  {tag:<34} {row:<17} median {statistics.median(times):5.1f} s  ({shown})")


if __name__ == "__main__":
    main()
