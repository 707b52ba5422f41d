"""Check: profile_steps runs every step under schedule(wait, warmup, active, repeat) and writes one
trace file per on_trace_ready call; the count and the steps in each trace match the checker's own
scheduled run."""

import json
import re
import warnings

import torch
from torch.profiler import ProfilerActivity, profile, schedule

_STEP = re.compile(r"^ProfilerStep#(\d+)$")


def _steps_in(ctx, path):
    try:
        trace = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        ctx.fail(f"{path.name} is not valid JSON ({exc}): write traces with prof.export_chrome_trace")
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    return sorted({int(m.group(1)) for e in events if isinstance(e, dict)
                   for m in [_STEP.match(str(e.get("name", "")))] if m})


def _work():
    a = torch.ones(32, 32)
    (a @ a).sum()


def _own_windows(ctx, num_steps, kw, folder):
    """The step numbers in each trace of the checker's own scheduled run."""
    folder.mkdir()

    def handler(prof):
        prof.export_chrome_trace(str(folder / f"own_{prof.step_num}.json"))

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**kw), on_trace_ready=handler) as prof:
        for _ in range(num_steps):
            _work()
            prof.step()
    return [_steps_in(ctx, p) for p in sorted(folder.glob("*.json"))]


def check(ctx):
    mine = ctx.learner
    warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
    cases = [
        dict(wait=1, warmup=1, active=2, repeat=2),
        dict(wait=2, warmup=1, active=ctx.choice([1, 3]), repeat=0),
        dict(wait=0, warmup=ctx.choice([1, 2]), active=2, repeat=ctx.choice([1, 3])),
    ]
    for trial in ctx.trials(len(cases)):
        kw = cases[trial]
        cycle = kw["wait"] + kw["warmup"] + kw["active"]
        # Often ends mid-cycle; the first schedule always gets into a third cycle's warmup, past
        # its repeat=2 limit.
        low = 2 if trial == 0 else 1
        num_steps = 2 * cycle + int(ctx.randint(low, cycle + 2, (1,)))
        desc = (f"schedule(wait={kw['wait']}, warmup={kw['warmup']}, active={kw['active']}, "
                f"repeat={kw['repeat']}) over {num_steps} steps")
        folder = ctx.tmpdir / f"traces_{trial}"
        folder.mkdir()
        calls = [0]

        def step_fn():
            calls[0] += 1
            _work()

        ctx.phase(f"trial {trial + 1}/{len(cases)}: your profile_steps, {desc}")
        mine.profile_steps(step_fn, num_steps, trace_dir=str(folder), **kw)
        ctx.expect(calls[0] == num_steps,
                   f"{desc}: step_fn was called {calls[0]} times, expected num_steps={num_steps}")

        expected = _own_windows(ctx, num_steps, kw, ctx.tmpdir / f"own_{trial}")
        files = sorted(folder.glob("*.json"))
        if len(files) != len(expected):
            why = ""
            if not files:
                why = (": pass on_trace_ready=your handler to profile(...), and call prof.step() after "
                       "every step (the schedule only advances on prof.step())")
            elif len(files) < len(expected):
                why = (": if the handler writes the same file name every time, each trace overwrites "
                       "the last; put prof.step_num in the name")
            elif kw["repeat"]:
                why = f": repeat={kw['repeat']} limits how many cycles are recorded"
            ctx.fail(f"{desc}: on_trace_ready should have fired {len(expected)} times, giving "
                     f"{len(expected)} trace file(s); trace_dir has {len(files)}{why}")
        got = sorted(_steps_in(ctx, p) for p in files)
        ctx.expect(got == sorted(expected),
                   f"{desc}: the traces hold profiler steps {got}, expected {sorted(expected)}: "
                   f"use schedule(wait=..., warmup=..., active=..., repeat=...) with the numbers given")
        ctx.figure(f"traces_trial{trial + 1}", {"learner": len(files), "expected": len(expected)})
