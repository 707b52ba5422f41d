"""Check: ship(model, example, target, path) writes, for each deployment target, a file that
target can run, or raises ValueError when none can. Sizes (features, capacity, max_batch) are
drawn per run. The files are loaded in one fresh Python process with no compiler on PATH and
without the learner's module: the Python target's file with torch.export.load, the C++ target's
with aoti_load_package (what AOTIModelPackageLoader reads in C++) and its input checks on. Each
file must equal the eager model on batches from 1 to max_batch, and refuse a larger batch, an
empty selection and one over capacity. The check itself never compiles: only a ship() that
builds an AOTInductor package does, once."""

import os
import subprocess
import sys
import time
import zipfile

import torch

# The service: a fresh interpreter (-I: no PYTHONPATH, no script folder), torch only, no
# compiler reachable (PATH and CXX point nowhere), the AOTInductor runtime's input checks on.
_SERVICE = r"""
import time, traceback
import torch

def run(fn, *args):
    try:
        with torch.no_grad():
            return fn(*args)
    except Exception as exc:
        return "ERROR: " + "".join(traceback.format_exception_only(type(exc), exc))[-1500:]

item = torch.load("service_inputs.pt")
results = {}
start = time.perf_counter()
try:
    if item["loader"] == "program":
        program = torch.export.load(item["file"])
        run_fn = program.module()
        bounds = []
        try:  # the range the program records for mask's batch (-1: no upper bound)
            for node in program.graph.nodes:
                if node.op == "placeholder" and node.name == "mask":
                    size = node.meta["val"].shape[0]
                    if not isinstance(size, int):
                        vr = program.range_constraints.get(size.node.expr)
                        if vr is not None:
                            bounds = [int(vr.lower), int(vr.upper) if vr.upper.is_finite else -1]
        except Exception:
            bounds = [-1, -1]
    else:
        run_fn = torch._inductor.aoti_load_package(item["file"])
        bounds = None
except Exception as exc:
    results = {"load_error": "".join(traceback.format_exception_only(type(exc), exc))[-1500:]}
else:
    loaded = time.perf_counter()
    outs = [run(run_fn, x, mask) for x, mask in item["cases"]]
    results = {"outs": outs, "bounds": bounds, "load_s": loaded - start,
               "first_call_s": time.perf_counter() - loaded}
torch.save(results, "service_outputs.pt")
"""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _kind(path) -> str:
    """What a shipped file is: 'program' (torch.export.save), 'package' (AOTInductor, compiled),
    'sources' (AOTInductor C++ sources a compiler still has to build), or 'other'."""
    try:
        names = zipfile.ZipFile(path).namelist()
    except (zipfile.BadZipFile, OSError):
        return "other"
    if any("/data/aotinductor/" in n and n.endswith(".so") for n in names):
        return "package"
    if any("/data/aotinductor/" in n for n in names):
        return "sources"
    if any(n.endswith("/models/model.json") for n in names):
        return "program"
    return "other"


def _ship(ctx, mine, model, example, target, path):
    where = f"runtime={target['runtime']!r}, machine={target['machine']!r}"
    try:
        mine.ship(model, example, target, str(path))
    except NotImplementedError:
        raise
    except Exception as exc:
        text = str(exc)
        if "data-dependent" in text:
            ctx.fail(
                ctx.t(
                    "ship({where}) failed in torch.export: {error}. A Python `if` on a size that "
                    "depends on the data (how many items the mask selects) cannot be traced: state what "
                    "must hold with torch._check, which the program then checks on every call",
                    where=where,
                    error=_first_line(exc),
                )
            )
        if "must always be related" in text or "Constraints violated" in text:
            ctx.fail(
                ctx.t(
                    "ship({where}) failed in torch.export: {error}. x always holds two rows per item "
                    "of mask: declare x's size as a function of mask's Dim instead of a Dim of its own",
                    where=where,
                    error=_first_line(exc),
                ),
                [line for line in text.splitlines() if line][:6],
            )
        ctx.fail(ctx.t("ship({where}) failed: {error}", where=where, error=_first_line(exc)))
    ctx.expect(path.is_file(), ctx.t("ship({where}) wrote no file at the path it was given", where=where))


def _cases(ctx, features, capacity, max_batch, example_batch, smallest):
    """(x, mask) pairs and what each must give: 'run' (compared with eager) or 'refuse'."""
    cases, kinds = [], []
    for batch in (smallest, example_batch, ctx.choice([max_batch - 1, max_batch])):
        picked = 1 if batch == 1 else ctx.choice(list(range(1, min(capacity, batch) + 1)))
        mask = torch.zeros(batch, dtype=torch.bool)
        mask[torch.randperm(batch, generator=ctx.generator)[:picked]] = True
        cases.append((ctx.randn(2 * batch, features), mask))
        kinds.append(("run", batch, picked))
    over = torch.zeros(max_batch, dtype=torch.bool)
    over[: capacity + 1] = True
    refusals = [
        (ctx.randn(2 * (max_batch + 1), features), _one(max_batch + 1)),
        (ctx.randn(2 * example_batch, features), torch.zeros(example_batch, dtype=torch.bool)),
        (ctx.randn(2 * max_batch, features), over),
    ]
    for case, why in zip(refusals, ("batch", "empty", "over")):
        cases.append(case)
        kinds.append(("refuse", why, None))
    return cases, kinds


def _one(n):
    mask = torch.zeros(n, dtype=torch.bool)
    mask[0] = True
    return mask


def _serve(ctx, side, loader, path, cases):
    """Loads one shipped file in a fresh process and runs every case there; returns its results."""
    tag = f"{side}_"
    torch.save({"loader": loader, "file": path.name, "cases": cases}, ctx.tmpdir / "service_inputs.pt")
    (ctx.tmpdir / "service.py").write_text(_SERVICE, encoding="utf-8")
    env = {
        **os.environ,
        "PATH": str(ctx.tmpdir / "no-compiler"),
        "CXX": "/nonexistent/c++",
        "CC": "/nonexistent/cc",
        "TORCHINDUCTOR_CACHE_DIR": str(ctx.tmpdir / f"{tag}fresh-cache"),
        "AOTI_RUNTIME_CHECK_INPUTS": "1",
    }
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-W", "ignore", "service.py"],
            cwd=ctx.tmpdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    except subprocess.TimeoutExpired:
        ctx.fail(ctx.t("loading your files in a fresh process took over 240 s"))
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        ctx.fail(
            ctx.t(
                "the fresh process that loads your files failed: {error}", error=lines[-1] if lines else done.returncode
            ),
            lines[-10:],
        )
    results = torch.load(ctx.tmpdir / "service_outputs.pt")
    results["wall_s"] = time.perf_counter() - start
    return results


def _judge(ctx, result, name, loader, expected, kinds, capacity, max_batch):
    """Every case's result from the fresh process: outputs equal the eager model's, refusals raise."""
    if "load_error" in result:
        lines = [line for line in result["load_error"].splitlines() if line.strip()]
        if "Infinity" in result["load_error"]:  # a derived Dim (2 * batch) without a max: unreadable
            ctx.fail(
                ctx.t(
                    "{name} does not load with {loader}: its batch range has no upper bound, and a program whose "
                    "derived size (2 * batch) is unbounded cannot be read back. The target allows at most {max} "
                    "items: give the batch Dim max={max}",
                    name=name,
                    loader=loader,
                    max=max_batch,
                ),
                lines[-4:],
            )
        ctx.fail(
            ctx.t(
                "{name} does not load with {loader} in a fresh process without a compiler: {error}",
                name=name,
                loader=loader,
                error=lines[-1] if lines else "?",
            ),
            lines[-8:],
        )
    for out, want, (kind, what, picked) in zip(result["outs"], expected, kinds):
        if kind == "run":
            if isinstance(out, str):
                lines = [line for line in out.splitlines() if line.strip()]
                ctx.fail(
                    ctx.t(
                        "{name} refused a batch of {batch} items with {picked} selected (the target allows "
                        "1 to {max}): {error}",
                        name=name,
                        batch=what,
                        picked=picked,
                        max=max_batch,
                        error=lines[-1] if lines else out,
                    )
                )
            ctx.expect_close(f"{name}: output for {what} items, {picked} selected", out, want)
        elif what == "batch":
            ctx.expect(
                isinstance(out, str),
                ctx.t(
                    "{name} accepted a batch of {batch} items: the target allows at most {max}. Give the "
                    "batch Dim max={max} (from the target), and derive x's size from it",
                    name=name,
                    batch=max_batch + 1,
                    max=max_batch,
                ),
            )
        elif what == "empty":
            ctx.expect(
                isinstance(out, str),
                ctx.t(
                    "{name} ran a call that selects no item and returned rows of zeros: the eager model "
                    "refuses it. Keep that rule in the program: torch._check(...) on the number of "
                    "selected items",
                    name=name,
                ),
            )
        else:
            ctx.expect(
                isinstance(out, str),
                ctx.t(
                    "{name} ran a call that selects {n} items, over the capacity of {capacity}: the eager "
                    "model refuses it",
                    name=name,
                    n=capacity + 1,
                    capacity=capacity,
                ),
            )


def check(ctx):
    mine = ctx.learner
    features = ctx.choice([6, 8, 12])
    capacity = ctx.choice([3, 4, 6])
    max_batch = ctx.choice([24, 40, 64])
    torch.manual_seed(ctx.seed)
    model = mine.PairScorer(features, ctx.choice([2, 3, 5]), capacity).eval()
    example_batch = ctx.choice([7, 10, 13])
    ex_mask = torch.zeros(example_batch, dtype=torch.bool)
    ex_mask[torch.randperm(example_batch, generator=ctx.generator)[:2]] = True
    example = (ctx.randn(2 * example_batch, features), ex_mask)
    # The program is run from 1 item; the package from 2, since its input checks start there (export
    # specialises sizes 0 and 1, and the AOTInductor runtime checks the compiled lower bound).
    cases, kinds, expected = {}, {}, {}
    for side, smallest in (("python", 1), ("cpp", 2)):
        cases[side], kinds[side] = _cases(ctx, features, capacity, max_batch, example_batch, smallest)
        with torch.no_grad():
            expected[side] = [
                model(x, mask) if kind == "run" else None for (x, mask), (kind, _, _) in zip(cases[side], kinds[side])
            ]

    # The Python service on another kind of machine first, then the target nothing can serve,
    # then the C++ server on a machine like this one: every rule but the last is judged before
    # an AOTInductor build (the one slow step) starts.
    files = {"python": ctx.tmpdir / "python_service.pt2", "cpp": ctx.tmpdir / "cpp_service.pt2"}
    names = {"python": ctx.t("the Python service's file"), "cpp": ctx.t("the C++ server's file")}
    with ctx.build(
        ctx.t("exporting for the Python service"),
        figure="program_s",
        label=ctx.t("building the file for the Python service"),
    ):
        _ship(
            ctx,
            mine,
            model,
            example,
            {"runtime": "python", "machine": "other", "max_batch": max_batch},
            files["python"],
        )
    kind = _kind(files["python"])
    ctx.expect(
        kind != "package" and kind != "sources",
        ctx.t(
            "for the Python service on another kind of machine ship wrote an AOTInductor package: it "
            "holds machine code (or C++ sources) for this machine's CPU, and that machine can neither run "
            "it nor compile it. Ship the exported program (torch.export.save), which torch runs "
            "anywhere without compiling"
        ),
    )
    ctx.phase(ctx.t("loading your files in a fresh process, with no compiler and without your module"))
    served = {"python": _serve(ctx, "python", "program", files["python"], cases["python"])}
    _judge(
        ctx,
        served["python"],
        names["python"],
        "torch.export.load",
        expected["python"],
        kinds["python"],
        capacity,
        max_batch,
    )
    bounds = served["python"]["bounds"]
    ctx.expect(
        bounds == [1, max_batch],
        ctx.t(
            "the Python service's program records the batch range {range} for mask "
            "(range_constraints), not [1, {max}]: a deployment reads it from the file. Declare the "
            "batch Dim with min=1 and max={max}",
            range=bounds,
            max=max_batch,
        ),
    )

    ctx.phase(ctx.t("shipping for a C++ server on another kind of machine"))
    nowhere = ctx.tmpdir / "cpp_other.pt2"
    try:
        mine.ship(model, example, {"runtime": "c++", "machine": "other", "max_batch": max_batch}, str(nowhere))
        raised = None
    except ValueError:
        raised = "ValueError"
    except Exception as exc:  # noqa: BLE001
        raised = type(exc).__name__
    ctx.expect(
        raised == "ValueError",
        ctx.t(
            "ship(runtime='c++', machine='other') {what}: no file can serve that target (a C++ server "
            "runs no Python, and a package compiled here runs only on machines like this one), so ship "
            "must raise ValueError",
            what=ctx.t("returned normally") if raised is None else ctx.t("raised {error}", error=raised),
        ),
    )
    ctx.expect(
        not nowhere.exists(),
        ctx.t("ship(runtime='c++', machine='other') raised but left a file behind: decide before writing anything"),
    )

    with ctx.build(
        ctx.t("shipping for the C++ server (an AOTInductor build takes a while)"),
        figure="package_s",
        label=ctx.t("building the file for the C++ server"),
    ):
        _ship(ctx, mine, model, example, {"runtime": "c++", "machine": "this", "max_batch": max_batch}, files["cpp"])
    kind = _kind(files["cpp"])
    if kind == "program":
        ctx.fail(
            ctx.t(
                "for the C++ server ship wrote an exported program: a program needs Python and torch to "
                "run it, and the server has no Python. Its loader (AOTIModelPackageLoader) reads an "
                "AOTInductor package, compiled ahead of time on a machine like the server's"
            )
        )
    if kind == "sources":
        ctx.fail(
            ctx.t(
                "for the C++ server ship wrote an AOTInductor package of C++ sources (package_cpp_only): "
                "building them needs a compiler at load time, which the server does not have. Ship the "
                "compiled package"
            )
        )
    served["cpp"] = _serve(ctx, "cpp", "package", files["cpp"], cases["cpp"])
    _judge(
        ctx,
        served["cpp"],
        names["cpp"],
        "torch._inductor.aoti_load_package",
        expected["cpp"],
        kinds["cpp"],
        capacity,
        max_batch,
    )

    sizes = {side: round(files[side].stat().st_size / 1024, 1) for side in files}
    ctx.figure(
        "file_kb",
        {"program": sizes["python"], "package": sizes["cpp"]},
        label=ctx.t(
            "file sizes: the Python service's {program} KB, the C++ server's {package} KB (machine "
            "code for this CPU included)",
            program=sizes["python"],
            package=sizes["cpp"],
        ),
    )
    loads = {side: round(served[side]["load_s"], 2) for side in served}
    ctx.figure(
        "load_s",
        loads,
        label=ctx.t(
            "loading in the fresh process: the program {python} s, the package {cpp} s (nothing compiled at load time)",
            **loads,
        ),
    )
