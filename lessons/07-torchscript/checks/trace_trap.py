"""Check: trace_gate returns a trace that is right on its example's branch and wrong on the
other; trap_gap measures that error; fix_gate returns a ScriptModule equal to the eager Gate
on both branches for several batch sizes."""

import warnings

import torch

from _common import expect_modes_kept, process_modes

_BRANCH = {True: "mean > 0, the `relu(h)` branch", False: "mean < 0, the `-h` branch"}


def _branch_input(ctx, rows, positive):
    """Random rows whose overall mean is +0.5 or -0.5, so the branch taken is known."""
    x = ctx.randn(rows, 16)
    return x - x.mean() + (0.5 if positive else -0.5)


def _mixed_rows(ctx, positive):
    """6 rows whose own means are +1.5 and -1.0 in turn (the batch's mean +0.25), or the negation:
    Gate routes the whole batch on the batch's sign, not each row on its own."""
    x = ctx.randn(6, 16)
    row_means = torch.tensor([1.5, -1.0] * 3).unsqueeze(-1)
    x = x - x.mean(dim=-1, keepdim=True) + row_means
    return x if positive else -x


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = ctx.reference.Gate()  # the given model: the learner's copy cannot drift from it

    # 1. The trap: trace on one branch (chosen at random), then feed the other.
    example_positive = bool(ctx.choice([True, False]))
    example = _branch_input(ctx, 8, example_positive)
    other = _branch_input(ctx, 8, not example_positive)
    ctx.phase(ctx.t("tracing with your trace_gate"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        modes = process_modes()  # inside the block: warnings shown, as when the learner runs the file
        traced = mine.trace_gate(model, example)
        expect_modes_kept(ctx, modes, "trace_gate(model, example)")
    ctx.expect(isinstance(traced, torch.jit.TracedModule),
               ctx.t("trace_gate returned a {type}: it should return torch.jit.trace(model, example), a traced "
                     "module (this step shows the trap)", type=type(traced).__name__))
    tracer_warnings = [w for w in caught if issubclass(w.category, torch.jit.TracerWarning)]
    ctx.figure("tracer_warnings", len(tracer_warnings), label=ctx.t("TracerWarnings while tracing"))
    with torch.no_grad():
        expected_example, expected_other = model(example), model(other)
        ctx.expect_close(f"traced output on the example ({_BRANCH[example_positive]})",
                         traced(example), expected_example)
        gap = (traced(other) - expected_other).abs().max().item()
    ctx.figure("traced_error_on_other_branch", gap, label=ctx.t("largest error of the traced module on the other branch"))
    ctx.expect(gap > 1e-3, ctx.t("your traced module is also right on the other branch: trace_gate should "
                                 "trace `model` once with `example`, so only that example's branch is recorded"))

    modes = process_modes()
    learner_gap = mine.trap_gap(model, traced, other)
    expect_modes_kept(ctx, modes, "trap_gap(model, traced, other)")
    ctx.expect(isinstance(learner_gap, float),
               ctx.t("trap_gap returned a {type}, expected a Python float (use .item())",
                     type=type(learner_gap).__name__))
    # The half-right gap: the traced module compared with itself (or anything that is 0 on `other`),
    # while the trace is wrong there by `gap` (> 1e-3, checked above).
    ctx.expect(learner_gap != 0.0,
               ctx.t("trap_gap returned 0.0, but the traced module is off by {gap:.3g} on `other`: compare the "
                     "traced module with the eager model there, not with itself", gap=gap))
    ctx.expect_close("trap_gap (the largest |traced(other) - model(other)|)", learner_gap, gap,
                     rtol=1e-5, atol=1e-6)

    # The trap the other way round (a second trace, on a batch of the other branch), so that both
    # signs of error are measured: a trace of the relu branch is off by relu(h) + h >= 0 on the
    # `-h` branch, a trace of the `-h` branch by -h - relu(h), largest where it is negative (-2h):
    # a gap without abs() is right only on the first.
    example2 = _branch_input(ctx, 16, not example_positive)
    other2 = _branch_input(ctx, 16, example_positive)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        modes = process_modes()
        traced2 = mine.trace_gate(model, example2)
        expect_modes_kept(ctx, modes, "trace_gate(model, example)")
    with torch.no_grad():
        ctx.expect_close(f"a second trace_gate's output on its example ({_BRANCH[not example_positive]})",
                         traced2(example2), model(example2))
        gap2 = (traced2(other2) - model(other2)).abs().max().item()
    modes = process_modes()
    learner_gap2 = mine.trap_gap(model, traced2, other2)
    expect_modes_kept(ctx, modes, "trap_gap(model, traced, other)")
    ctx.expect(isinstance(learner_gap2, float),
               ctx.t("trap_gap returned a {type}, expected a Python float (use .item())",
                     type=type(learner_gap2).__name__))
    ctx.expect_close(f"trap_gap for a trace of the {_BRANCH[not example_positive]} (the largest "
                     f"|traced(other) - model(other)|, whatever its sign)", learner_gap2, gap2, rtol=1e-5, atol=1e-6)

    # 2. The fix: right on both branches, for inputs of several batch sizes.
    ctx.phase(ctx.t("checking your fix_gate"))
    modes = process_modes()
    fixed = mine.fix_gate(model)
    expect_modes_kept(ctx, modes, "fix_gate(model)")
    ctx.expect(isinstance(fixed, torch.jit.ScriptModule),
               ctx.t("fix_gate returned a {type}, expected a TorchScript module (torch.jit.ScriptModule), for "
                     "example torch.jit.script(model)", type=type(fixed).__name__))
    # Fine if a branch-free rewrite (torch.where) was traced; not if Gate itself was traced again.
    if isinstance(fixed, torch.jit.TracedModule) and getattr(fixed, "original_name", None) == type(model).__name__:
        with torch.no_grad():
            both = all(torch.allclose(fixed(x), model(x), rtol=1e-4, atol=1e-5) for x in (example, other))
        if not both:
            ctx.fail(ctx.t("fix_gate returned a traced module of Gate: a trace records only the branch its "
                           "example took, whatever example you give it, so the fixed module is still wrong on "
                           "the other branch. Compile the source instead (torch.jit.script keeps the `if`)"))
    for trial in ctx.trials(6):
        positive = trial % 2 == (0 if example_positive else 1)  # the trace's branch first, then the other
        if trial < 4:
            rows = (8, 8, 1, 17)[trial]
            x = example if trial == 0 else other if trial == 1 else _branch_input(ctx, rows, positive)
            where = f"{rows} row(s) with {_BRANCH[positive]}"
        else:  # one batch, one branch: rows whose own means have the other sign follow the batch
            x = _mixed_rows(ctx, positive)
            where = f"a batch with {_BRANCH[positive]} whose rows' own means have both signs"
        with torch.no_grad():
            ctx.expect_close(f"fixed module on {where}", fixed(x), model(x))
