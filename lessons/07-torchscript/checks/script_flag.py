"""Check: script_for_serving(Tagger(...)) gives a ScriptModule that the check saves with
torch.jit.save and loads in a fresh Python process that has never seen the class. There, in eval
mode, forward (with and without a mask) and embed must equal the eager model; in training mode
forward either equals it or raises because the training path was dropped. In the learner's
process, describe(...) on the scripted module must answer as the eager model's does. Two models
per check: one with a temperature, one without."""

import re
import subprocess
import sys

import torch

from _common import expect_modes_kept, first_lines, process_modes

# What a method dropped with @torch.jit.unused raises when it is called.
_UNUSED = "annotated to be ignored and cannot be run"
_PYTHON_CALL = re.compile(r"Could not export Python function call '(\w+)'")

# The service: a fresh interpreter (-I: no PYTHONPATH, no script folder, no user site), torch
# only. It loads every file it is given and records what each call returns or raises.
_SERVICE = r"""
import sys, traceback
import torch

def run(fn, *args):
    try:
        with torch.no_grad():
            return fn(*args)
    except Exception as exc:
        return "ERROR: " + "".join(traceback.format_exception_only(type(exc), exc))[-2000:]

inputs = torch.load("inputs.pt")
results = {}
for name, item in inputs.items():
    m = torch.jit.load(item["file"], map_location="cpu")
    out = {"methods": sorted(m._c._method_names())}
    m.eval()
    out["forward"] = run(m, item["x"])
    out["forward_mask"] = run(m, item["x"], item["mask"])
    out["embed"] = run(m.embed, item["x"]) if hasattr(m, "embed") else "MISSING"
    m.train()
    out["train"] = run(m, item["x"])
    results[name] = out
torch.save(results, "outputs.pt")
"""


def _method_in(text: str) -> str:
    """The `self.<method>(` call that a TorchScript traceback points at, or '?'."""
    before_here = text.split("<--- HERE")
    if len(before_here) < 2:
        return "?"
    calls = re.findall(r"self\.(\w+)\(", before_here[-2].splitlines()[-2] if "\n" in before_here[-2] else "")
    return calls[-1] if calls else "?"


def _script(ctx, mine, model, which):
    modes = process_modes()
    try:
        scripted = mine.script_for_serving(model)
    except NotImplementedError:
        raise
    except Exception as exc:  # a TorchScript compile error: show where it points
        first, rest = first_lines(exc, 14)
        ctx.fail(ctx.t("TorchScript could not compile your Tagger ({which}): {error}", which=which, error=first), rest)
    expect_modes_kept(ctx, modes, "script_for_serving(model)")
    ctx.expect(
        isinstance(scripted, torch.jit.ScriptModule) and not isinstance(scripted, torch.jit.TracedModule),
        ctx.t(
            "script_for_serving returned a {type}, expected the ScriptModule that torch.jit.script "
            "returns (a trace records one path through forward)",
            type=type(scripted).__name__,
        ),
    )
    return scripted


def _describe(ctx, scripted, run, epoch):
    """describe(...) called on the scripted module, as the training job calls it."""
    if not hasattr(scripted, "describe"):
        ctx.fail(
            ctx.t(
                "your scripted module has no describe(): scripting keeps only forward, what it calls and "
                "@torch.jit.export methods, so the training job's call finds nothing. A Python-only "
                "method that must stay callable on the scripted module is marked @torch.jit.ignore"
            )
        )
    try:
        return scripted.describe(run=run, epoch=epoch)
    except Exception as exc:
        ctx.fail(
            ctx.t("describe(run=..., epoch=...) on your scripted module failed: {error}", error=first_lines(exc, 1)[0])
        )


def _save(ctx, scripted, path, which):
    try:
        torch.jit.save(scripted, str(path))
    except Exception as exc:
        text = str(exc)
        found = _PYTHON_CALL.search(text)
        if found:
            ctx.fail(
                ctx.t(
                    "torch.jit.save refused your scripted module ({which}): its compiled code calls "
                    "{method}, which @torch.jit.ignore left as a Python function, and a saved file holds no "
                    "Python. What the service runs must compile; what it never runs can be dropped with "
                    "@torch.jit.unused",
                    which=which,
                    method=found.group(1),
                )
            )
        ctx.fail(
            ctx.t(
                "torch.jit.save failed on your scripted module ({which}): {error}",
                which=which,
                error=first_lines(exc, 1)[0],
            )
        )


def _serve(ctx, items):
    """Runs the service in a fresh process; returns its results per model."""
    (ctx.tmpdir / "service.py").write_text(_SERVICE, encoding="utf-8")
    torch.save(items, ctx.tmpdir / "inputs.pt")
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-W", "ignore", "service.py"],
            cwd=ctx.tmpdir,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        ctx.fail(ctx.t("loading your saved file in a fresh process took over 120 s"))
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        ctx.fail(
            ctx.t(
                "a fresh Python process could not load your saved file with torch.jit.load: {error}",
                error=lines[-1] if lines else done.returncode,
            ),
            lines[-12:],
        )
    return torch.load(ctx.tmpdir / "outputs.pt")


def _served(ctx, result, key, which, call):
    """One call's result from the service: the tensor, or a failure that names the cause."""
    value = result[key]
    if isinstance(value, torch.Tensor):
        return value
    if value == "MISSING":
        ctx.fail(
            ctx.t(
                "the saved file ({which}) has no method embed, so the service's call to it fails: "
                "scripting compiles forward and what forward calls, nothing else. A method that "
                "others call on the file needs @torch.jit.export",
                which=which,
            )
        )
    if _UNUSED in value:
        ctx.fail(
            ctx.t(
                "in the fresh process, {call} on the saved file ({which}) raised: its compiled code calls "
                "{method}, dropped with @torch.jit.unused, and the service runs that path. What the "
                "service runs must compile: rewrite {method} with torch operations",
                call=call,
                which=which,
                method=_method_in(value),
            )
        )
    lines = [line for line in value.splitlines() if line.strip()]
    ctx.fail(
        ctx.t(
            "in the fresh process, {call} on the saved file ({which}) failed: {error}",
            call=call,
            which=which,
            error=lines[-1] if lines else value,
        ),
        lines[-12:],
    )
    raise AssertionError("unreachable")


def check(ctx):
    mine = ctx.learner
    features = ctx.choice([12, 16, 20])
    hidden = ctx.choice([24, 32, 40])
    tags = ctx.choice([5, 6, 7, 8])
    temperature = round(0.5 + 2.0 * float(ctx.rand(1)), 3)
    models, scripted, expected, items = {}, {}, {}, {}
    for which, temp in ((ctx.t("with a temperature"), temperature), (ctx.t("temperature None"), None)):
        torch.manual_seed(ctx.seed + len(models))
        model = mine.Tagger(features, hidden, tags, temperature=temp)  # in training mode, as built
        models[which] = model
        ctx.expect_equal(
            f"parameters of Tagger({features}, {hidden}, {tags}) ({which})",
            sorted((k, tuple(v.shape)) for k, v in model.state_dict().items()),
            sorted((k, tuple(v.shape)) for k, v in model.state_dict().items()),
        )
        ctx.phase(ctx.t("scripting your Tagger ({which})", which=which))
        scripted[which] = _script(ctx, mine, model, which)

        batch = ctx.choice([1, 3, 7, 16])
        x = ctx.randn(batch, features)
        mask = ctx.rand(batch, tags) > 0.3
        with torch.no_grad():
            model.eval()
            expected[which] = {"forward": model(x), "forward_mask": model(x, mask), "embed": model.embed(x)}
            model.train()
            expected[which]["train"] = model(x)
        path = ctx.tmpdir / f"tagger-{len(items)}.pt"
        _save(ctx, scripted[which], path, which)
        items[which] = {"file": path.name, "x": x, "mask": mask}

    # The training job's Python, on the scripted module it keeps.
    for k, which in enumerate(scripted):
        got = _describe(ctx, scripted[which], f"run-{ctx.seed % 97}", k + 1)
        ctx.expect_equal(
            f"describe(run=..., epoch={k + 1}) on your scripted module ({which})",
            got,
            models[which].describe(run=f"run-{ctx.seed % 97}", epoch=k + 1),
        )

    ctx.phase(ctx.t("loading your saved files in a fresh Python process, without the Tagger class"))
    results = _serve(ctx, items)
    dropped = 0
    for which, result in results.items():
        want = expected[which]
        for key, call in (
            ("forward", "forward(x) in eval mode"),
            ("forward_mask", "forward(x, mask) in eval mode"),
            ("embed", "embed(x)"),
        ):
            out = _served(ctx, result, key, which, call)
            ctx.expect_close(
                f"{call} of the saved file ({which}), batch {tuple(items[which]['x'].shape)}", out, want[key]
            )
        train = result["train"]
        # The service never trains: a dropped training path (it raises when called) is as right as a
        # compiled one, which must then compute what the eager model computes.
        if isinstance(train, str) and _UNUSED in train:
            dropped += 1
            train = models[which].train()(items[which]["x"]).detach()
        else:
            train = _served(ctx, result, "train", which, "forward(x) in training mode")
        ctx.expect_close(f"forward(x) in training mode of the saved file ({which})", train, want["train"])

    first = next(iter(results.values()))
    size_kb = round((ctx.tmpdir / items[next(iter(items))]["file"]).stat().st_size / 1024, 1)
    ctx.figure(
        "served_file",
        {"kb": size_kb, "methods": len(first["methods"])},
        label=ctx.t(
            "the saved file: {kb} KB, compiled methods {methods}; its training path {train}",
            kb=size_kb,
            methods=", ".join(first["methods"]),
            train=ctx.t("was dropped (calling it raises)") if dropped else ctx.t("was compiled"),
        ),
    )
