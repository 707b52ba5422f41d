"""Check: profile_steps runs every step under schedule(wait, warmup, active, repeat) and writes one
trace file per on_trace_ready call; the count, the ProfilerStep#N ranges and the calls of step_fn
recorded in each trace match the checker's own scheduled run."""

import json
import re
import warnings

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

_STEP = re.compile(r"^ProfilerStep#(\d+)$")


_CALL = re.compile(r"^checker_step_fn#(\d+)$")


def _steps_in(ctx, path):
    """(the ProfilerStep#N numbers, the step_fn calls, 0-based) recorded in one trace file."""
    try:
        trace = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        ctx.fail(ctx.t("{file} is not valid JSON ({error}): write traces with prof.export_chrome_trace",
                       file=path.name, error=exc))
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    names = [str(e.get("name", "")) for e in events if isinstance(e, dict)]
    steps = sorted({int(m.group(1)) for n in names for m in [_STEP.match(n)] if m})
    calls = sorted({int(m.group(1)) for n in names for m in [_CALL.match(n)] if m})
    return steps, calls


def _work(k):
    # Each call labels itself, so a trace shows which calls of step_fn it recorded, not only
    # which ProfilerStep#N ranges it has.
    with record_function(f"checker_step_fn#{k}"):
        a = torch.ones(32, 32)
        (a @ a).sum()


def _own_windows(ctx, num_steps, kw, folder):
    """The step numbers in each trace of the checker's own scheduled run."""
    folder.mkdir()

    def handler(prof):
        prof.export_chrome_trace(str(folder / f"own_{prof.step_num}.json"))

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**kw), on_trace_ready=handler) as prof:
        for k in range(num_steps):
            _work(k)
            prof.step()
    return [_steps_in(ctx, p) for p in sorted(folder.glob("*.json"))]


def check(ctx):
    mine = ctx.learner
    warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
    warnings.filterwarnings("ignore", message=".*Profiler won't be using warmup.*")
    cases = [
        dict(wait=1, warmup=1, active=2, repeat=2),
        dict(wait=2, warmup=1, active=ctx.choice([1, 3]), repeat=0),
        dict(wait=0, warmup=ctx.choice([1, 2]), active=2, repeat=ctx.choice([1, 3])),
        # warmup=0 is a valid schedule (torch only warns): the numbers are used as given.
        dict(wait=1, warmup=0, active=ctx.choice([1, 2]), repeat=0),
    ]
    for trial in ctx.trials(len(cases)):
        kw = cases[trial]
        cycle = kw["wait"] + kw["warmup"] + kw["active"]
        # Often ends mid-cycle; the first schedule always gets into a third cycle's warmup, past
        # its repeat=2 limit.
        low = 2 if trial == 0 else 1
        num_steps = 2 * cycle + int(ctx.randint(low, cycle + 2, (1,)))
        desc = ctx.t("schedule(wait={wait}, warmup={warmup}, active={active}, repeat={repeat}) over {n} steps",
                     n=num_steps, **kw)
        folder = ctx.tmpdir / f"traces_{trial}"
        folder.mkdir()
        # The caller's folder may already hold files: profile_steps only adds its traces.
        keep = folder / "notes.txt"
        keep.write_text(f"the caller's notes, trial {trial}\n", encoding="utf-8")
        calls = [0]

        def step_fn(calls=calls):
            _work(calls[0])
            calls[0] += 1

        ctx.phase(ctx.t("trial {trial}/{total}: your profile_steps, {desc}",
                        trial=trial + 1, total=len(cases), desc=desc))
        mine.profile_steps(step_fn, num_steps, trace_dir=str(folder), **kw)
        ctx.expect(keep.is_file() and keep.read_text(encoding="utf-8") == f"the caller's notes, trial {trial}\n",
                   ctx.t("{desc}: trace_dir already held a file of the caller's ({file}), and after profile_steps "
                         "it is gone or changed: write your trace files into trace_dir and leave everything "
                         "else in it alone (no rmtree, no clearing the folder)", desc=desc, file=keep.name))
        notes = keep.read_text(encoding="utf-8") if keep.is_file() else None
        ctx.expect_equal(ctx.t("{desc}: the caller's file {file} after profile_steps", desc=desc, file=keep.name),
                         notes, notes)
        ctx.expect(calls[0] == num_steps,
                   ctx.t("{desc}: step_fn was called {calls} times, expected num_steps={n}",
                         desc=desc, calls=calls[0], n=num_steps))
        ctx.expect_equal(ctx.t("{desc}: how often step_fn was called", desc=desc), calls[0], calls[0])

        expected = _own_windows(ctx, num_steps, kw, ctx.tmpdir / f"own_{trial}")
        files = sorted(folder.glob("*.json"))
        if len(files) != len(expected):
            why = ""
            if not kw["warmup"] and files:
                why = ctx.t(": warmup=0 is a valid schedule (torch only warns about it): pass wait, warmup, active "
                            "and repeat to schedule(...) exactly as given")
            elif not files:
                why = ctx.t(": pass on_trace_ready=your handler to profile(...), and call prof.step() after "
                            "every step (the schedule only advances on prof.step())")
            elif len(files) < len(expected):
                why = ctx.t(": if the handler writes the same file name every time, each trace overwrites "
                            "the last; put prof.step_num in the name")
            elif kw["repeat"]:
                why = ctx.t(": repeat={repeat} limits how many cycles are recorded", repeat=kw["repeat"])
            ctx.fail(ctx.t("{desc}: on_trace_ready should have fired {n} times, giving {n} trace file(s); "
                           "trace_dir has {found}{why}", desc=desc, n=len(expected), found=len(files), why=why))
        ctx.expect_equal(ctx.t("{desc}: the number of trace files in trace_dir", desc=desc), len(files), len(files))
        found = sorted(_steps_in(ctx, p) for p in files)
        got, want = [s for s, _ in found], sorted(s for s, _ in expected)
        ctx.expect(got == want,
                   ctx.t("{desc}: the traces hold profiler steps {got}, expected {want}: "
                         "use schedule(wait=..., warmup=..., active=..., repeat=...) with the numbers given",
                         desc=desc, got=got, want=want))
        ctx.expect_equal(ctx.t("{desc}: the profiler steps in each trace", desc=desc), got, got)
        # Paired with the steps: both lists in the order of (steps, calls), so a trace with no
        # steps (a window the last cycle cut short) sorts the same way on both sides.
        got_calls, want_calls = [c for _, c in found], [c for _, c in sorted(expected)]
        if got_calls != want_calls:
            shifted = [[c - 1 for c in w] for w in want_calls]
            if got_calls == [[c + 1 for c in w] for w in want_calls] or got_calls == shifted:
                ctx.fail(ctx.t("{desc}: your traces record calls {got} of step_fn (counting from 0), expected "
                               "{want}: each window is off by one call. prof.step() marks the END of a step: "
                               "call it right after step_fn(), not before", desc=desc, got=got_calls,
                               want=want_calls))
            ctx.fail(ctx.t("{desc}: your traces record calls {got} of step_fn (counting from 0), expected "
                           "{want}: call step_fn() once per step and prof.step() right after it",
                           desc=desc, got=got_calls, want=want_calls))
        ctx.expect_equal(ctx.t("{desc}: the calls of step_fn in each trace (counting from 0)", desc=desc),
                         got_calls, got_calls)
        ctx.figure(f"traces_trial{trial + 1}", {"learner": len(files), "expected": len(expected)},
                   label=ctx.t("{desc}: {learner} trace file(s), {expected} expected", desc=desc,
                               learner=len(files), expected=len(expected)))
