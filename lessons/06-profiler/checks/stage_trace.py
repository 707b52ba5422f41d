"""Check: train_step_with_trace does a real training step and writes a Chrome trace (valid JSON)
with "forward", "backward" and "optimizer_step" ranges of non-zero duration, in that order, each
containing the ops of its stage."""

import copy
import json

import torch
from torch import nn

LABELS = ("forward", "backward", "optimizer_step")

# What each stage's range must contain (checked on event names inside the range).
_INSIDE = {
    "forward": lambda n: n in ("aten::addmm", "aten::linear"),
    "backward": lambda n: n.endswith("Backward0"),
    "optimizer_step": lambda n: n.startswith("Optimizer.step#"),
}


def _what(ctx, label):
    """What the `label` range must contain, in the learner's words."""
    if label == "forward":
        return ctx.t("the model's ops (aten::linear/aten::addmm)")
    if label == "backward":
        return ctx.t("autograd's backward ops (…Backward0)")
    return ctx.t("the optimizer's step (Optimizer.step#…)")


def check(ctx):
    mine = ctx.learner
    for trial in ctx.trials(2):
        d_in, hidden, classes = ctx.choice([17, 32]), ctx.choice([64, 96]), ctx.choice([3, 5])
        batch = ctx.choice([8, 13])
        # Weights from the run's seed, not from whatever the global RNG holds after the learner's
        # code ran: a rerun with the same seed must build the same model.
        torch.manual_seed(ctx.seed + trial)
        model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, classes))
        # The second model is handed over in eval mode (the caller froze it, e.g. for BatchNorm
        # statistics; this MLP trains the same either way): the step must leave the mode alone.
        model.train(trial == 0)
        ref_model = copy.deepcopy(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        ref_opt = torch.optim.SGD(ref_model.parameters(), lr=0.1, momentum=0.9)
        x = ctx.randn(batch, d_in)
        y = ctx.randint(0, classes, (batch,))
        path = ctx.tmpdir / f"step_{trial}.json"

        ctx.phase(ctx.t("trial {trial}/2: your train_step_with_trace", trial=trial + 1))
        try:
            loss = mine.train_step_with_trace(model, opt, x, y, str(path))
        except AttributeError as exc:
            if "'NoneType' object has no attribute 'save'" in str(exc):
                ctx.fail(ctx.t("export_chrome_trace was called while the profiler was still running: the "
                               "trace only exists once the `with profile(...)` block has ended, so export "
                               "after that block"))
            raise

        ref_loss = nn.functional.cross_entropy(ref_model(x), y)
        ref_loss.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        ctx.expect(isinstance(loss, (int, float)) and not isinstance(loss, bool),
                   ctx.t("train_step_with_trace should return the loss as a float (loss.item()), got {type}",
                         type=type(loss).__name__))
        ctx.expect_close("the returned loss", float(loss), ref_loss.item(), rtol=1e-5, atol=1e-6)
        for (pname, p), ref_p in zip(model.named_parameters(), ref_model.parameters()):
            ctx.expect_close(f"parameter {pname} after the step", p.detach(), ref_p.detach(),
                             rtol=1e-5, atol=1e-6)
        ctx.expect(all(p.grad is None or not p.grad.any() for p in model.parameters()),
                   ctx.t("the gradients are still set after the step: call optimizer.zero_grad() in the "
                         "optimizer_step stage"))

        ctx.expect(path.exists(), ctx.t("no trace file was written at trace_path ({file})", file=path.name))
        try:
            trace = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            ctx.fail(ctx.t("the trace file is not valid JSON ({error}): write it with prof.export_chrome_trace",
                           error=exc))
        events = trace.get("traceEvents") if isinstance(trace, dict) else None
        ctx.expect(isinstance(events, list), ctx.t("the trace has no `traceEvents` list: write it with "
                                                   "prof.export_chrome_trace(trace_path)"))
        spans = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]

        ranges = {}
        for label in LABELS:
            found = [e for e in spans if e.get("name") == label]
            ctx.expect(found, ctx.t("the trace has no {label!r} range: wrap that stage in "
                                    "`with record_function({label!r}):` inside the profile block", label=label))
            ctx.expect(len(found) == 1, ctx.t("the trace has {n} {label!r} ranges, expected one",
                                              n=len(found), label=label))
            e = found[0]
            ctx.expect(float(e.get("dur", 0)) > 0, ctx.t("the {label!r} range has zero duration: it must "
                                                         "enclose the stage's code", label=label))
            ranges[label] = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))

        for label in LABELS:
            start, end = ranges[label]
            test = _INSIDE[label]
            inside = [e for e in spans if test(str(e.get("name", "")))
                      and start <= float(e["ts"]) <= end]
            ctx.expect(inside, ctx.t("the {label!r} range contains none of {what}: put that stage's code "
                                     "inside `with record_function({label!r}):`", label=label,
                                     what=_what(ctx, label)))

        start, end = ranges["optimizer_step"]
        zeroed = [e for e in spans if str(e.get("name", "")).startswith("Optimizer.zero_grad#")]
        ctx.expect(any(start <= float(e["ts"]) <= end for e in zeroed),
                   ctx.t("the 'optimizer_step' range does not contain optimizer.zero_grad(){where}: that stage is "
                         "optimizer.step() and optimizer.zero_grad(), both inside "
                         "`with record_function('optimizer_step'):`",
                         where=ctx.t(" (it ran outside the range)") if zeroed else ""))

        f, b, o = (ranges[k] for k in LABELS)
        ctx.expect(f[1] <= b[0] + 1 and b[1] <= o[0] + 1,
                   ctx.t("the ranges overlap or are out of order: expected forward, then backward, then "
                         "optimizer_step, one after another (not nested)"))
        stage_us = {k: ranges[k][1] - ranges[k][0] for k in LABELS}
        ctx.figure(f"stage_us_trial{trial + 1}", stage_us,
                   label=ctx.t("stages in trial {trial}: forward {forward:.0f} µs, backward {backward:.0f} µs, "
                               "optimizer_step {optimizer_step:.0f} µs", trial=trial + 1, **stage_us))
